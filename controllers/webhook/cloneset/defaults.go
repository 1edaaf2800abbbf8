package cloneset

import (
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/coredefaults"
)

const (
	defaultReplicas             int32 = 1
	defaultRevisionHistoryLimit int32 = 10
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
		coredefaults.PodSpec(&spec.Template.Spec)
		for i := range spec.VolumeClaimTemplates {
			coredefaults.PVC(&spec.VolumeClaimTemplates[i])
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
