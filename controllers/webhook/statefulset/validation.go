package statefulset

import (
	"fmt"
	"math"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ordinals"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/podtemplate"
)

// validateStatefulSet checks a StatefulSet being created (old nil) or updated, after defaulting.
func validateStatefulSet(set, old *appsv1beta1.StatefulSet) field.ErrorList {
	var errs field.ErrorList
	meta := field.NewPath("metadata")
	if old != nil {
		errs = append(errs, apimachineryvalidation.ValidateObjectMetaUpdate(&set.ObjectMeta, &old.ObjectMeta, meta)...)
		errs = append(errs, validateSpecUpdate(&set.Spec, &old.Spec)...)
	}
	// A pod's hostname is its name, <set>-<ordinal>, so the set's name must be a DNS label.
	errs = append(errs, apimachineryvalidation.ValidateObjectMeta(&set.ObjectMeta, true, func(name string, prefix bool) []string {
		if prefix && len(name) > 1 && name[len(name)-1] == '-' {
			name = name[:len(name)-2] + "a"
		}
		return validation.IsDNS1123Label(name)
	}, meta)...)
	if old == nil {
		// The name cannot change, so an existing StatefulSet is never refused for it.
		errs = append(errs, validateNameLength(set.Name, field.NewPath("metadata", "name"))...)
	}
	errs = append(errs, validateSpec(&set.Spec, field.NewPath("spec"))...)
	return errs
}

// maxNameLength is the longest StatefulSet name whose pods can be created: each pod carries its
// revision's name, <name>-<hash of up to 10 digits>, in the controller-revision-hash label, whose
// value is at most 63 characters. The pod's own name, <name>-<ordinal of up to 10 digits>, is then
// a valid hostname too.
var maxNameLength = validation.LabelValueMaxLength - 1 - len(strconv.FormatUint(math.MaxUint32, 10))

func validateNameLength(name string, p *field.Path) field.ErrorList {
	if len(name) <= maxNameLength {
		return nil
	}
	return field.ErrorList{field.Invalid(p, name, fmt.Sprintf("must be no more than %d characters: each pod's %s label holds <name>-<revision hash of up to 10 digits>, and a label value is at most %d characters",
		maxNameLength, appsv1.ControllerRevisionHashLabelKey, validation.LabelValueMaxLength))}
}

// validateSpecUpdate refuses a change to a field 1.8 does not let change once the set exists.
func validateSpecUpdate(spec, old *appsv1beta1.StatefulSetSpec) field.ErrorList {
	a, b := spec.DeepCopy(), old.DeepCopy()
	for _, s := range []*appsv1beta1.StatefulSetSpec{a, b} {
		s.Replicas, s.Template, s.UpdateStrategy = nil, corev1.PodTemplateSpec{}, appsv1beta1.StatefulSetUpdateStrategy{}
		s.PersistentVolumeClaimRetentionPolicy, s.ScaleStrategy, s.VolumeClaimTemplates = nil, nil, nil
		s.VolumeClaimUpdateStrategy, s.ReserveOrdinals, s.Lifecycle = appsv1beta1.VolumeClaimUpdateStrategy{}, nil, nil
		s.RevisionHistoryLimit, s.Ordinals = nil, nil
	}
	if apiequality.Semantic.DeepEqual(a, b) {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec"), "only replicas, ordinals, template, reserveOrdinals, lifecycle, revisionHistoryLimit, persistentVolumeClaimRetentionPolicy, scaleStrategy, volumeClaimTemplates, volumeClaimUpdateStrategy and updateStrategy may change; selector, serviceName and podManagementPolicy are fixed at creation")}
}

func validateSpec(spec *appsv1beta1.StatefulSetSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch spec.PodManagementPolicy {
	case "":
		errs = append(errs, field.Required(p.Child("podManagementPolicy"), "OrderedReady or Parallel"))
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.NotSupported(p.Child("podManagementPolicy"), spec.PodManagementPolicy, []string{string(appsv1.OrderedReadyPodManagement), string(appsv1.ParallelPodManagement)}))
	}
	if spec.Replicas != nil && *spec.Replicas < 0 {
		errs = append(errs, field.Invalid(p.Child("replicas"), *spec.Replicas, "must be 0 or more"))
	}
	if spec.Ordinals != nil && spec.Ordinals.Start < 0 {
		errs = append(errs, field.Invalid(p.Child("ordinals", "start"), spec.Ordinals.Start, "must be 0 or more"))
	}
	_, rerrs := ordinals.ParseReserved(spec.ReserveOrdinals, p.Child("reserveOrdinals"))
	errs = append(errs, rerrs...)
	errs = append(errs, validateScaleStrategy(spec, p.Child("scaleStrategy"))...)
	errs = append(errs, validateUpdateStrategy(spec, p)...)
	errs = append(errs, validateRetention(spec.PersistentVolumeClaimRetentionPolicy, p.Child("persistentVolumeClaimRetentionPolicy"))...)
	errs = append(errs, validateSelector(spec, p)...)
	errs = append(errs, validateTemplate(spec, p.Child("template"))...)
	errs = append(errs, podtemplate.ValidateLifecycle(spec.Lifecycle, p.Child("lifecycle"))...)
	return errs
}

func validateScaleStrategy(spec *appsv1beta1.StatefulSetSpec, p *field.Path) field.ErrorList {
	if spec.ScaleStrategy == nil || spec.ScaleStrategy.MaxUnavailable == nil {
		return nil
	}
	mp := p.Child("maxUnavailable")
	errs := positiveIntOrPercent(spec.ScaleStrategy.MaxUnavailable, mp)
	if spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		errs = append(errs, field.Invalid(mp, spec.ScaleStrategy.MaxUnavailable.String(), "works only with podManagementPolicy Parallel; remove it or use Parallel"))
	}
	return errs
}

func validateUpdateStrategy(spec *appsv1beta1.StatefulSetSpec, p *field.Path) field.ErrorList {
	us := spec.UpdateStrategy
	up := p.Child("updateStrategy")
	switch us.Type {
	case "":
		return field.ErrorList{field.Required(up.Child("type"), "RollingUpdate or OnDelete")}
	case appsv1.OnDeleteStatefulSetStrategyType:
		if us.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(up.Child("rollingUpdate"), "may be set only with updateStrategy.type RollingUpdate")}
		}
		return nil
	case appsv1.RollingUpdateStatefulSetStrategyType:
	default:
		return field.ErrorList{field.NotSupported(up.Child("type"), us.Type, []string{string(appsv1.RollingUpdateStatefulSetStrategyType), string(appsv1.OnDeleteStatefulSetStrategyType)})}
	}
	ru := us.RollingUpdate
	rp := up.Child("rollingUpdate")
	if ru == nil {
		return field.ErrorList{field.Required(rp, "the rolling update's settings (the defaulting webhook fills them in)")}
	}
	var errs field.ErrorList
	if ru.Partition == nil {
		errs = append(errs, field.Required(rp.Child("partition"), "how many replicas, from the lowest ordinal, stay at the current revision"))
	} else if *ru.Partition < 0 {
		errs = append(errs, field.Invalid(rp.Child("partition"), *ru.Partition, "must be 0 or more"))
	}
	if ru.MinReadySeconds == nil {
		errs = append(errs, field.Required(rp.Child("minReadySeconds"), "seconds from 0 to 300"))
	} else if m := *ru.MinReadySeconds; m < 0 || m > appsv1beta1.MaxMinReadySeconds {
		errs = append(errs, field.Invalid(rp.Child("minReadySeconds"), m, fmt.Sprintf("must be from 0 to %d seconds", appsv1beta1.MaxMinReadySeconds)))
	}
	mp := rp.Child("maxUnavailable")
	if ru.MaxUnavailable == nil {
		errs = append(errs, field.Required(mp, "a number or percentage of replicas, at least 1"))
	} else {
		errs = append(errs, positiveIntOrPercent(ru.MaxUnavailable, mp)...)
		if spec.PodManagementPolicy != appsv1.ParallelPodManagement && (ru.MaxUnavailable.Type != intstr.Int || ru.MaxUnavailable.IntVal != 1) {
			errs = append(errs, field.Invalid(mp, ru.MaxUnavailable.String(), "must be 1 unless podManagementPolicy is Parallel"))
		}
	}
	errs = append(errs, validatePodUpdatePolicy(spec, rp.Child("podUpdatePolicy"), p.Child("template", "spec", "readinessGates"))...)
	if ru.UnorderedUpdate != nil {
		op := rp.Child("unorderedUpdate")
		if spec.PodManagementPolicy != appsv1.ParallelPodManagement {
			errs = append(errs, field.Forbidden(op, "works only with podManagementPolicy Parallel"))
		}
		errs = append(errs, podtemplate.ValidatePriority(ru.UnorderedUpdate.PriorityStrategy, op.Child("priorityStrategy"), false)...)
	}
	if ips := ru.InPlaceUpdateStrategy; ips != nil && ips.GracePeriodSeconds < 0 {
		errs = append(errs, field.Invalid(rp.Child("inPlaceUpdateStrategy", "gracePeriodSeconds"), ips.GracePeriodSeconds, "must be 0 or more"))
	}
	return errs
}

// validatePodUpdatePolicy checks the policy and, as 1.8 does, that an in-place policy comes with
// the InPlaceUpdateReady readiness gate in the template.
func validatePodUpdatePolicy(spec *appsv1beta1.StatefulSetSpec, p, gates *field.Path) field.ErrorList {
	policy := spec.UpdateStrategy.RollingUpdate.PodUpdatePolicy
	switch policy {
	case "":
		return field.ErrorList{field.Required(p, "ReCreate, InPlaceIfPossible or InPlaceOnly")}
	case appsv1beta1.RecreatePodUpdateStrategyType:
		return nil
	case appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType, appsv1beta1.InPlaceOnlyPodUpdateStrategyType:
		for _, g := range spec.Template.Spec.ReadinessGates {
			if g.ConditionType == appspub.InPlaceUpdateReady {
				return nil
			}
		}
		return field.ErrorList{field.Invalid(gates, spec.Template.Spec.ReadinessGates,
			fmt.Sprintf("must contain {conditionType: %s} when podUpdatePolicy is %s", appspub.InPlaceUpdateReady, policy))}
	default:
		return field.ErrorList{field.NotSupported(p, policy, []string{string(appsv1beta1.RecreatePodUpdateStrategyType), string(appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType), string(appsv1beta1.InPlaceOnlyPodUpdateStrategyType)})}
	}
}

func validateRetention(pol *appsv1beta1.StatefulSetPersistentVolumeClaimRetentionPolicy, p *field.Path) field.ErrorList {
	if pol == nil {
		return nil
	}
	valid := []string{string(appsv1beta1.RetainPersistentVolumeClaimRetentionPolicyType), string(appsv1beta1.DeletePersistentVolumeClaimRetentionPolicyType)}
	var errs field.ErrorList
	for name, v := range map[string]appsv1beta1.PersistentVolumeClaimRetentionPolicyType{"whenDeleted": pol.WhenDeleted, "whenScaled": pol.WhenScaled} {
		switch v {
		case appsv1beta1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1beta1.DeletePersistentVolumeClaimRetentionPolicyType:
		default:
			errs = append(errs, field.NotSupported(p.Child(name), v, valid))
		}
	}
	return errs
}

func validateSelector(spec *appsv1beta1.StatefulSetSpec, p *field.Path) field.ErrorList {
	return podtemplate.ValidateSelector(spec.Selector, spec.Template.Labels, p, podtemplate.SetSelector)
}

// validateTemplate checks the mistakes that would make every pod fail, when the user writes the
// set; the apiserver validates each pod fully when the controller creates it.
func validateTemplate(spec *appsv1beta1.StatefulSetSpec, p *field.Path) field.ErrorList {
	t := &spec.Template
	errs := podtemplate.ValidateBasics(t, p, podtemplate.Workload("must be unset: the pods of a StatefulSet run until it deletes them"))
	sp := p.Child("spec")
	for i, c := range t.Spec.Containers {
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(sp.Child("containers").Index(i).Child("name"), c.Name, msg))
		}
	}
	for i, vct := range spec.VolumeClaimTemplates {
		for _, msg := range validation.IsDNS1123Label(vct.Name) {
			errs = append(errs, field.Invalid(p.Root().Child("spec", "volumeClaimTemplates").Index(i).Child("name"), vct.Name, msg))
		}
	}
	return errs
}

// positiveIntOrPercent checks a count of replicas given as an integer of at least 1 or a
// percentage above 0%.
func positiveIntOrPercent(v *intstr.IntOrString, p *field.Path) field.ErrorList {
	switch v.Type {
	case intstr.Int:
		if v.IntVal < 1 {
			return field.ErrorList{field.Invalid(p, v.IntVal, "must be at least 1")}
		}
	case intstr.String:
		n, err := intstr.GetScaledValueFromIntOrPercent(v, 100, false)
		if err != nil || len(v.StrVal) < 2 || v.StrVal[len(v.StrVal)-1] != '%' {
			return field.ErrorList{field.Invalid(p, v.StrVal, "must be an integer or a percentage such as \"20%\"")}
		}
		if n < 1 || n > 100 {
			return field.ErrorList{field.Invalid(p, v.StrVal, "must be a percentage from 1% to 100%")}
		}
	}
	return nil
}

// validateDeletion enforces the policy.kruise.io/delete-protection label on a StatefulSet.
func validateDeletion(set *appsv1beta1.StatefulSet) error {
	if set == nil {
		return nil
	}
	return deletionprotection.Workload("StatefulSet", set, set.Spec.Replicas)
}
