package cloneset

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
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
