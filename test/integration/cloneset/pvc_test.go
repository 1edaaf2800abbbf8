package cloneset

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func claimNames(t *testing.T, ns string) []string {
	t.Helper()
	var list corev1.PersistentVolumeClaimList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range list.Items {
		if c.DeletionTimestamp == nil {
			out = append(out, c.Name)
		}
	}
	sort.Strings(out)
	return out
}

func TestVolumeClaimTemplatesAreReusedByInstanceID(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(2).VolumeClaimTemplate("data", "1Gi").Obj())
	waitSettled(t, ns, "web", 2, settle)

	var want []string
	ids := map[string]bool{}
	for _, p := range mustLivePods(t, ns, "web") {
		id := p.Labels[appsv1alpha1.CloneSetInstanceID]
		ids[id] = true
		want = append(want, "data-web-"+id)
		var claim string
		for _, v := range p.Spec.Volumes {
			if v.Name == "data" && v.PersistentVolumeClaim != nil {
				claim = v.PersistentVolumeClaim.ClaimName
			}
		}
		if claim != "data-web-"+id {
			t.Errorf("pod %s mounts claim %q, want data-web-%s", p.Name, claim, id)
		}
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, claimNames(t, ns)); diff != "" {
		t.Fatalf("claims (-want +got):\n%s", diff)
	}

	// A recreate update replaces the pods; the new ones take the old instance IDs and claims.
	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) {
		cs.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "V", Value: "2"}}
	})
	eventually(t, settle, "pods recreated on the same instance IDs", func(ctx context.Context) error {
		pods, err := livePods(ctx, ns, "web")
		if err != nil {
			return err
		}
		if len(pods) != 2 {
			return fmt.Errorf("%d pods", len(pods))
		}
		for _, p := range pods {
			if len(p.Spec.Containers[0].Env) == 0 {
				return fmt.Errorf("pod %s not recreated yet", p.Name)
			}
			if !ids[p.Labels[appsv1alpha1.CloneSetInstanceID]] {
				return fmt.Errorf("pod %s has a new instance ID", p.Name)
			}
		}
		return nil
	})
	waitSettled(t, ns, "web", 2, settle)
	if diff := cmp.Diff(want, claimNames(t, ns)); diff != "" {
		t.Fatalf("claims after the recreate (-want +got):\n%s", diff)
	}

	// Scaling down removes the pod and its claim.
	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](1) })
	waitSettled(t, ns, "web", 1, settle)
	left := mustLivePods(t, ns, "web")[0]
	eventually(t, settle, "the removed pod's claim is deleted", func(ctx context.Context) error {
		if got := claimNames(t, ns); !cmp.Equal(got, []string{"data-web-" + left.Labels[appsv1alpha1.CloneSetInstanceID]}) {
			return fmt.Errorf("claims %v", got)
		}
		return nil
	})
}
