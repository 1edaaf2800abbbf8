package cloneset

import (
	"testing"

	"github.com/kruise-addon/kruise-addon/controllers/internal/podowner"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/features"
)

// TestScalingExcludesPreparingDeleteByTheCloneSetsLabelOrTheManagersFlag: as in 1.8, a CloneSet
// leaves PreparingDelete pods out of its replica count when it carries the label
// apps.kruise.io/cloneset-scaling-exclude-preparing-delete: "true", or for every CloneSet when
// the manager runs with --cloneset-scaling-exclude-preparing-delete.
func TestScalingExcludesPreparingDeleteByTheCloneSetsLabelOrTheManagersFlag(t *testing.T) {
	tests := map[string]struct {
		label, flag bool
		want        bool
	}{
		"neither counts PreparingDelete pods as replicas":     {},
		"the CloneSet's label excludes them":                  {label: true, want: true},
		"the manager's flag excludes them for every CloneSet": {flag: true, want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := statusScope(2)
			if tc.label {
				s.cs.Labels = map[string]string{appsv1alpha1.CloneSetScalingExcludePreparingDeleteKey: "true"}
			}
			r := &Reconciler{Base: podowner.Base{Clock: clocktesting.NewFakeClock(planNow), Gates: features.NewGate()}, excludePreparingDelete: tc.flag}
			in, err := r.planInput(s, map[types.UID]bool{})
			if err != nil {
				t.Fatalf("planInput: %v", err)
			}
			if in.excludePreparingDelete != tc.want {
				t.Errorf("excludePreparingDelete = %v, want %v", in.excludePreparingDelete, tc.want)
			}
		})
	}
}
