package kinds

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// WorkloadSpreadBuilder builds a WorkloadSpread.
type WorkloadSpreadBuilder struct{ obj *appsv1alpha1.WorkloadSpread }

// WorkloadSpread starts a WorkloadSpread with no target and no subsets.
func WorkloadSpread(name, namespace string) *WorkloadSpreadBuilder {
	return &WorkloadSpreadBuilder{obj: &appsv1alpha1.WorkloadSpread{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "WorkloadSpread"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	}}
}

// Target points the WorkloadSpread at the workload apiVersion/kind/name.
func (b *WorkloadSpreadBuilder) Target(apiVersion, kind, name string) *WorkloadSpreadBuilder {
	b.obj.Spec.TargetReference = &appsv1alpha1.TargetReference{APIVersion: apiVersion, Kind: kind, Name: name}
	return b
}

// ZoneSubset adds a subset requiring nodes of zone (topology.kubernetes.io/zone); max is its
// maxReplicas ("30%" or "3"), empty for none.
func (b *WorkloadSpreadBuilder) ZoneSubset(name, zone, max string) *WorkloadSpreadBuilder {
	s := appsv1alpha1.WorkloadSpreadSubset{Name: name, RequiredNodeSelectorTerm: &corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}}}}
	if max != "" {
		s.MaxReplicas = ptr.To(intstr.Parse(max))
	}
	b.obj.Spec.Subsets = append(b.obj.Spec.Subsets, s)
	return b
}

// SubsetPatch sets the patch of the last subset added.
func (b *WorkloadSpreadBuilder) SubsetPatch(raw string) *WorkloadSpreadBuilder {
	b.obj.Spec.Subsets[len(b.obj.Spec.Subsets)-1].Patch = runtime.RawExtension{Raw: []byte(raw)}
	return b
}

// Adaptive sets scheduleStrategy Adaptive with rescheduleCriticalSeconds.
func (b *WorkloadSpreadBuilder) Adaptive(rescheduleCriticalSeconds int32) *WorkloadSpreadBuilder {
	b.obj.Spec.ScheduleStrategy = appsv1alpha1.WorkloadSpreadScheduleStrategy{
		Type:     appsv1alpha1.AdaptiveWorkloadSpreadScheduleStrategyType,
		Adaptive: &appsv1alpha1.AdaptiveWorkloadSpreadStrategy{RescheduleCriticalSeconds: ptr.To(rescheduleCriticalSeconds)},
	}
	return b
}

// Obj returns a copy of the WorkloadSpread.
func (b *WorkloadSpreadBuilder) Obj() *appsv1alpha1.WorkloadSpread { return b.obj.DeepCopy() }
