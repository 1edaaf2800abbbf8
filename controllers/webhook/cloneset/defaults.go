package cloneset

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/coredefaults"
)

const (
	defaultReplicas                      int32 = 1
	defaultRevisionHistoryLimit          int32 = 10
	defaultTerminationGracePeriodSeconds int64 = 30
)

// setDefaults fills what a CloneSet leaves out. withTemplate also applies the core pod defaults
// to the template and the volume claim templates, so that the template hashes the same as the
// pods the apiserver will store; the caller decides when (on create, and on an update that
// changes the template, unless TemplateNoDefaults is on).
func setDefaults(cs *appsv1alpha1.CloneSet, withTemplate bool) {
	spec := &cs.Spec
	if spec.Replicas == nil {
		spec.Replicas = ptr.To(defaultReplicas)
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptr.To(defaultRevisionHistoryLimit)
	}
	if withTemplate {
		setPodSpecDefaults(&spec.Template.Spec)
		for i := range spec.VolumeClaimTemplates {
			setPVCDefaults(&spec.VolumeClaimTemplates[i])
		}
	}

	us := &spec.UpdateStrategy
	switch us.Type {
	case "":
		us.Type = appsv1alpha1.RecreateCloneSetUpdateStrategyType
	case appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType:
		if us.InPlaceUpdateStrategy == nil {
			us.InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{}
		}
	}
	if us.Partition == nil {
		us.Partition = ptr.To(intstr.FromInt32(0))
	}
	if us.MaxUnavailable == nil {
		us.MaxUnavailable = ptr.To(intstr.FromString(appsv1alpha1.DefaultCloneSetMaxUnavailable))
	}
	if us.MaxSurge == nil {
		us.MaxSurge = ptr.To(intstr.FromInt32(0))
	}
}

// setPodSpecDefaults applies the core/v1 defaults the apiserver gives a pod's spec. Pods made
// from the template get them anyway; putting them in the template keeps the template's
// revision hash stable and lets in-place updates compare like with like.
func setPodSpecDefaults(s *corev1.PodSpec) {
	if s.DNSPolicy == "" {
		s.DNSPolicy = corev1.DNSClusterFirst
	}
	if s.RestartPolicy == "" {
		s.RestartPolicy = corev1.RestartPolicyAlways
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &corev1.PodSecurityContext{}
	}
	if s.TerminationGracePeriodSeconds == nil {
		s.TerminationGracePeriodSeconds = ptr.To(defaultTerminationGracePeriodSeconds)
	}
	if s.SchedulerName == "" {
		s.SchedulerName = corev1.DefaultSchedulerName
	}
	for i := range s.InitContainers {
		coredefaults.Container(&s.InitContainers[i], s.HostNetwork)
	}
	for i := range s.Containers {
		coredefaults.Container(&s.Containers[i], s.HostNetwork)
	}
	for i := range s.Volumes {
		coredefaults.Volume(&s.Volumes[i])
	}
}

func setPVCDefaults(pvc *corev1.PersistentVolumeClaim) {
	if pvc.Spec.VolumeMode == nil {
		pvc.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	}
	if pvc.Status.Phase == "" {
		pvc.Status.Phase = corev1.ClaimPending
	}
}
