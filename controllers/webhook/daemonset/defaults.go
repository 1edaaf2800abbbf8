package daemonset

import (
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

const (
	defaultBurstReplicas        = 250
	defaultRevisionHistoryLimit = 10
)

// setDefaults fills what a DaemonSet leaves out, as 1.8 does: burstReplicas 250; a RollingUpdate
// strategy of the Standard type that replaces one node at a time (maxUnavailable 1, maxSurge 0)
// when neither bound is set, with partition 0; the deprecated Surging type becomes Standard with
// a surge of one pod and none unavailable; revisionHistoryLimit 10. The pod template is stored as
// given.
func setDefaults(ds *appsv1alpha1.DaemonSet) {
	spec := &ds.Spec
	if spec.BurstReplicas == nil {
		spec.BurstReplicas = ptr.To(intstr.FromInt32(defaultBurstReplicas))
	}
	us := &spec.UpdateStrategy
	if us.Type == "" {
		us.Type = appsv1alpha1.RollingUpdateDaemonSetStrategyType
	}
	if us.Type == appsv1alpha1.RollingUpdateDaemonSetStrategyType {
		if us.RollingUpdate == nil {
			us.RollingUpdate = &appsv1alpha1.RollingUpdateDaemonSet{}
		}
		ru := us.RollingUpdate
		if ru.Type == appsv1alpha1.DeprecatedSurgingRollingUpdateType {
			if ru.MaxSurge == nil {
				ru.MaxSurge = ptr.To(intstr.FromInt32(1))
			}
			if ru.MaxUnavailable == nil {
				ru.MaxUnavailable = ptr.To(intstr.FromInt32(0))
			}
		}
		if ru.Type == "" || ru.Type == appsv1alpha1.DeprecatedSurgingRollingUpdateType {
			ru.Type = appsv1alpha1.StandardRollingUpdateType
		}
		if ru.MaxUnavailable == nil && ru.MaxSurge == nil {
			ru.MaxUnavailable = ptr.To(intstr.FromInt32(1))
			ru.MaxSurge = ptr.To(intstr.FromInt32(0))
		}
		if ru.Partition == nil {
			// Tools read the partition as a number (Argo CD's health check subtracts it), so it
			// is always there.
			ru.Partition = ptr.To[int32](0)
		}
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptr.To[int32](defaultRevisionHistoryLimit)
	}
}
