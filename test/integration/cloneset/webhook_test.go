package cloneset

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func TestInvalidSpecIsRefusedWithTheFieldPath(t *testing.T) {
	ns := newNamespace(t)
	tests := map[string]struct {
		cs        *appsv1alpha1.CloneSet
		wantField string
	}{
		"maxSurge with InPlaceOnly": {
			cs:        kinds.CloneSet("a", ns).Replicas(2).UpdateType(appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType).MaxSurge(intstr.FromInt32(1)).Obj(),
			wantField: "spec.updateStrategy.maxSurge",
		},
		"maxUnavailable and maxSurge both below one": {
			cs:        kinds.CloneSet("b", ns).Replicas(4).MaxUnavailable(intstr.FromInt32(0)).MaxSurge(intstr.FromInt32(0)).Obj(),
			wantField: "spec.updateStrategy.maxUnavailable",
		},
		"a selector that does not match the template": {
			cs: func() *appsv1alpha1.CloneSet {
				cs := kinds.CloneSet("c", ns).Obj()
				cs.Spec.Selector.MatchLabels = map[string]string{"app": "other"}
				return cs
			}(),
			wantField: "spec.selector",
		},
		"podsToDelete naming a pod the CloneSet does not own": {
			cs:        kinds.CloneSet("d", ns).PodsToDelete("someone-elses-pod").Obj(),
			wantField: "spec.scaleStrategy.podsToDelete",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := env.Client.Create(context.Background(), tc.cs)
			if err == nil {
				t.Fatalf("created; want it refused naming %s", tc.wantField)
			}
			if !strings.Contains(err.Error(), tc.wantField) {
				t.Fatalf("error does not name %s: %v", tc.wantField, err)
			}
		})
	}
}

// TestAThousandPodsToDeleteNamesAreAnsweredAtTheManagersRateLimit lists 1000 names through the
// manager's own webhook, whose API client is limited to 30 requests a second: the answer must
// not cost a request per name, or it would not come within the webhook's timeout.
func TestAThousandPodsToDeleteNamesAreAnsweredAtTheManagersRateLimit(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(2).Obj())
	waitSettled(t, ns, "web", 2, settle)
	pods := framework.MustLivePods(t, env.Client, ns, "web")

	names := []string{pods[0].Name}
	for i := range 999 {
		names = append(names, fmt.Sprintf("web-none-%03d", i))
	}
	err := framework.TryChange(context.Background(), env.Client, client.ObjectKey{Namespace: ns, Name: "web"}, func(cs *appsv1alpha1.CloneSet) {
		cs.Spec.ScaleStrategy.PodsToDelete = names
	})
	if err == nil {
		t.Fatal("an update naming 999 pods that do not exist was accepted")
	}
	for _, want := range []string{"spec.scaleStrategy.podsToDelete", "999 listed are not", "web-none-000, web-none-001", "and 979 more"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not contain %q", err, want)
		}
	}

	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.ScaleStrategy.PodsToDelete = []string{pods[0].Name} })
	framework.Eventually(t, settle, "the listed pod is replaced", func(ctx context.Context) error {
		live, err := framework.LivePods(ctx, env.Client, ns, "web")
		if err != nil {
			return err
		}
		for _, p := range live {
			if p.Name == pods[0].Name {
				return fmt.Errorf("pod %s still there", p.Name)
			}
		}
		if len(live) != 2 {
			return fmt.Errorf("%d live pods", len(live))
		}
		return nil
	})
}
