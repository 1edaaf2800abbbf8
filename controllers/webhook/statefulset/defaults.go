package statefulset

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/ptr"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/coredefaults"
	"github.com/kruise-addon/kruise-addon/features"
)

const (
	defaultReplicas             int32 = 1
	defaultRevisionHistoryLimit int32 = 10
)

// setDefaults fills what a StatefulSet spec leaves out, with 1.8's defaults. withTemplates also
// applies the core defaults to the pod template and the volume claim templates; the caller
// decides when (admit.TemplateDefaults).
func setDefaults(spec *appsv1beta1.StatefulSetSpec, gates featuregate.FeatureGate, withTemplates bool) {
	if spec.PodManagementPolicy == "" {
		spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	us := &spec.UpdateStrategy
	if us.Type == "" {
		us.Type = appsv1.RollingUpdateStatefulSetStrategyType
	}
	if us.Type == appsv1.RollingUpdateStatefulSetStrategyType {
		if us.RollingUpdate == nil {
			us.RollingUpdate = &appsv1beta1.RollingUpdateStatefulSetStrategy{}
		}
		ru := us.RollingUpdate
		if ru.Partition == nil {
			ru.Partition = ptr.To[int32](0)
		}
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}
		if ru.PodUpdatePolicy == "" {
			ru.PodUpdatePolicy = appsv1beta1.RecreatePodUpdateStrategyType
		}
		if ru.MinReadySeconds == nil {
			ru.MinReadySeconds = ptr.To[int32](0)
		}
	}
	if gates.Enabled(features.StatefulSetAutoDeletePVC) {
		if spec.PersistentVolumeClaimRetentionPolicy == nil {
			spec.PersistentVolumeClaimRetentionPolicy = &appsv1beta1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
		}
		pol := spec.PersistentVolumeClaimRetentionPolicy
		if pol.WhenDeleted == "" {
			pol.WhenDeleted = appsv1beta1.RetainPersistentVolumeClaimRetentionPolicyType
		}
		if pol.WhenScaled == "" {
			pol.WhenScaled = appsv1beta1.RetainPersistentVolumeClaimRetentionPolicyType
		}
	}
	if gates.Enabled(features.StatefulSetAutoResizePVCGate) && spec.VolumeClaimUpdateStrategy.Type == "" {
		spec.VolumeClaimUpdateStrategy.Type = appsv1beta1.OnPVCDeleteVolumeClaimUpdateStrategyType
	}
	if spec.Replicas == nil {
		spec.Replicas = ptr.To(defaultReplicas)
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptr.To(defaultRevisionHistoryLimit)
	}
	if withTemplates {
		coredefaults.PodSpec(&spec.Template.Spec)
		for i := range spec.VolumeClaimTemplates {
			coredefaults.PVC(&spec.VolumeClaimTemplates[i])
		}
	}
}
