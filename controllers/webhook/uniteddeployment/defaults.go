package uniteddeployment

import (
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/coredefaults"
)

// defaultRevisionHistoryLimit is 1.8's revisionHistoryLimit default.
const defaultRevisionHistoryLimit int32 = 10

// setDefaults fills what a UnitedDeployment leaves out, as 1.8 does: revisionHistoryLimit 10,
// the Manual update strategy with an empty manualUpdate, and, when subsets are elastic (some
// set minReplicas or maxReplicas) and none sets replicas, minReplicas 0 on every subset.
// withTemplates also applies the core pod and claim defaults to a statefulSetTemplate (1.8 does
// so for that subset kind only); the caller decides when (admit.TemplateDefaults).
func setDefaults(ud *appsv1alpha1.UnitedDeployment, withTemplates bool) {
	spec := &ud.Spec
	if st := spec.Template.StatefulSetTemplate; st != nil && withTemplates {
		coredefaults.PodSpec(&st.Spec.Template.Spec)
		for i := range st.Spec.VolumeClaimTemplates {
			coredefaults.PVC(&st.Spec.VolumeClaimTemplates[i])
		}
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptr.To(defaultRevisionHistoryLimit)
	}
	if spec.UpdateStrategy.Type == "" {
		spec.UpdateStrategy.Type = appsv1alpha1.ManualUpdateStrategyType
	}
	if spec.UpdateStrategy.Type == appsv1alpha1.ManualUpdateStrategyType && spec.UpdateStrategy.ManualUpdate == nil {
		spec.UpdateStrategy.ManualUpdate = &appsv1alpha1.ManualUpdate{}
	}
	fixed, elastic := false, false
	for _, s := range spec.Topology.Subsets {
		fixed = fixed || s.Replicas != nil
		elastic = elastic || s.MinReplicas != nil || s.MaxReplicas != nil
	}
	if elastic && !fixed {
		for i := range spec.Topology.Subsets {
			if s := &spec.Topology.Subsets[i]; s.MinReplicas == nil {
				s.MinReplicas = ptr.To(intstr.FromInt32(0))
			}
		}
	}
}
