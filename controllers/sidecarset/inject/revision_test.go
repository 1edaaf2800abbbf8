package inject

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

func TestChooseRevision(t *testing.T) {
	canary := &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}
	tests := []struct {
		name       string
		revision   *appsv1alpha1.SidecarSetInjectRevision
		strategy   appsv1alpha1.SidecarSetUpdateStrategy
		noPinned   bool
		podLabels  map[string]string
		roll       float64
		wantPinned bool
	}{
		{name: "no pinned revision injects the latest"},
		{name: "a pinned revision that cannot be found injects the latest", revision: &appsv1alpha1.SidecarSetInjectRevision{RevisionName: ptr.To("r1")}, noPinned: true},
		{name: "policy Always injects the pinned revision", revision: &appsv1alpha1.SidecarSetInjectRevision{RevisionName: ptr.To("r1"), Policy: appsv1alpha1.AlwaysSidecarSetInjectRevisionPolicy}, wantPinned: true},
		{name: "a paused update injects the pinned revision even with policy Partial",
			revision: &appsv1alpha1.SidecarSetInjectRevision{RevisionName: ptr.To("r1"), Policy: appsv1alpha1.PartialSidecarSetInjectRevisionPolicy},
			strategy: appsv1alpha1.SidecarSetUpdateStrategy{Paused: true}, wantPinned: true},
		{name: "policy Partial injects the pinned revision into a pod the update selector skips",
			revision: &appsv1alpha1.SidecarSetInjectRevision{RevisionName: ptr.To("r1"), Policy: appsv1alpha1.PartialSidecarSetInjectRevisionPolicy},
			strategy: appsv1alpha1.SidecarSetUpdateStrategy{Selector: canary}, wantPinned: true},
		{name: "policy Partial injects the latest into a pod the update selector picks",
			revision: &appsv1alpha1.SidecarSetInjectRevision{RevisionName: ptr.To("r1"), Policy: appsv1alpha1.PartialSidecarSetInjectRevisionPolicy},
			strategy: appsv1alpha1.SidecarSetUpdateStrategy{Selector: canary}, podLabels: map[string]string{"canary": "true"}},
		{name: "policy Partial with a 70% partition holds a pod back on a roll below 0.7",
			revision: &appsv1alpha1.SidecarSetInjectRevision{RevisionName: ptr.To("r1"), Policy: appsv1alpha1.PartialSidecarSetInjectRevisionPolicy},
			strategy: appsv1alpha1.SidecarSetUpdateStrategy{Partition: ptr.To(intstr.FromString("70%"))}, roll: 0.69, wantPinned: true},
		{name: "policy Partial with a 70% partition gives the latest on a roll of 0.7 or more",
			revision: &appsv1alpha1.SidecarSetInjectRevision{RevisionName: ptr.To("r1"), Policy: appsv1alpha1.PartialSidecarSetInjectRevisionPolicy},
			strategy: appsv1alpha1.SidecarSetUpdateStrategy{Partition: ptr.To(intstr.FromString("70%"))}, roll: 0.7},
		{name: "policy Partial with a number partition gives the latest",
			revision: &appsv1alpha1.SidecarSetInjectRevision{RevisionName: ptr.To("r1"), Policy: appsv1alpha1.PartialSidecarSetInjectRevisionPolicy},
			strategy: appsv1alpha1.SidecarSetUpdateStrategy{Partition: ptr.To(intstr.FromInt32(3))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			latest := sidecarSet("log")
			latest.Spec.InjectionStrategy.Revision = tt.revision
			latest.Spec.UpdateStrategy = tt.strategy
			var pinned *appsv1alpha1.SidecarSet
			if !tt.noPinned {
				pinned = sidecarSet("log")
			}
			got := ChooseRevision(latest, pinned, tt.podLabels, tt.roll)
			if (got == pinned && pinned != nil) != tt.wantPinned {
				t.Errorf("pinned injected = %v, want %v", got == pinned, tt.wantPinned)
			}
		})
	}
}
