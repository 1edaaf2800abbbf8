package daemonset

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/podtemplate"
)

// validateDaemonSet checks a DaemonSet being created (old nil) or updated.
func validateDaemonSet(ds, old *appsv1alpha1.DaemonSet) field.ErrorList {
	var errs field.ErrorList
	if old != nil {
		errs = append(errs, apimachineryvalidation.ValidateObjectMetaUpdate(&ds.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
		if !apiequality.Semantic.DeepEqual(ds.Spec.Selector, old.Spec.Selector) {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "selector"), "is immutable: create a new DaemonSet to select other pods"))
		}
	}
	errs = append(errs, apimachineryvalidation.ValidateObjectMeta(&ds.ObjectMeta, true,
		apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	errs = append(errs, validateSpec(&ds.Spec, field.NewPath("spec"))...)
	return errs
}

func validateSpec(spec *appsv1alpha1.DaemonSetSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateSelector(spec, p)...)
	errs = append(errs, validateTemplate(&spec.Template, p.Child("template"))...)
	if spec.MinReadySeconds < 0 {
		errs = append(errs, field.Invalid(p.Child("minReadySeconds"), spec.MinReadySeconds, "must be 0 or more seconds"))
	}
	if spec.RevisionHistoryLimit != nil && *spec.RevisionHistoryLimit < 0 {
		errs = append(errs, field.Invalid(p.Child("revisionHistoryLimit"), *spec.RevisionHistoryLimit, "must be 0 or more"))
	}
	if spec.BurstReplicas != nil {
		if _, err := nonNegativeIntOrPercent(*spec.BurstReplicas, false); err != "" {
			errs = append(errs, field.Invalid(p.Child("burstReplicas"), intOrStringValue(spec.BurstReplicas), err))
		}
	}
	errs = append(errs, validateUpdateStrategy(&spec.UpdateStrategy, p.Child("updateStrategy"))...)
	errs = append(errs, validateLifecycle(spec.Lifecycle, p.Child("lifecycle"))...)
	return errs
}

func validateSelector(spec *appsv1alpha1.DaemonSetSpec, p *field.Path) field.ErrorList {
	return podtemplate.ValidateSelector(spec.Selector, spec.Template.Labels, p, podtemplate.SelectorRules{
		Required: "a label selector that matches spec.template.metadata.labels",
		Empty:    "must not be empty: a DaemonSet selects its pods by at least one label",
		Mismatch: "must match spec.selector, or the DaemonSet would not find its own pods",
	})
}

func validateTemplate(t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	r := podtemplate.Workload("must be unset: a daemon runs until its DaemonSet removes it")
	// A daemon runs on many nodes at once, so a disk that attaches read-write to one node only
	// cannot serve it.
	r.Volume = func(vp *field.Path, v *corev1.Volume) field.ErrorList {
		switch {
		case v.GCEPersistentDisk != nil && !v.GCEPersistentDisk.ReadOnly:
			return field.ErrorList{field.Invalid(vp.Child("gcePersistentDisk", "readOnly"), false, "must be true for a DaemonSet: its pods run on many nodes at once")}
		case v.AWSElasticBlockStore != nil && !v.AWSElasticBlockStore.ReadOnly:
			return field.ErrorList{field.Invalid(vp.Child("awsElasticBlockStore", "readOnly"), false, "must be true for a DaemonSet: its pods run on many nodes at once")}
		}
		return nil
	}
	return podtemplate.Validate(t, p, r)
}

func validateUpdateStrategy(s *appsv1alpha1.DaemonSetUpdateStrategy, p *field.Path) field.ErrorList {
	switch s.Type {
	case appsv1alpha1.OnDeleteDaemonSetStrategyType:
		return nil
	case appsv1alpha1.RollingUpdateDaemonSetStrategyType:
	default:
		return field.ErrorList{field.NotSupported(p.Child("type"), s.Type, []string{string(appsv1alpha1.RollingUpdateDaemonSetStrategyType), string(appsv1alpha1.OnDeleteDaemonSetStrategyType)})}
	}
	rp := p.Child("rollingUpdate")
	ru := s.RollingUpdate
	if ru == nil {
		return field.ErrorList{field.Required(rp, "the rolling update's bounds, for the RollingUpdate type")}
	}
	var errs field.ErrorList
	bad := false
	bound := func(v *intstr.IntOrString, name string) int {
		if v == nil {
			return 0
		}
		n, msg := nonNegativeIntOrPercent(*v, true)
		if msg != "" {
			errs = append(errs, field.Invalid(rp.Child(name), intOrStringValue(v), msg))
			bad = true
		}
		return n
	}
	unavailable, surge := bound(ru.MaxUnavailable, "maxUnavailable"), bound(ru.MaxSurge, "maxSurge")
	switch {
	case bad:
		// The bounds are refused already; how they combine means nothing.
	case unavailable != 0 && surge != 0:
		errs = append(errs, field.Invalid(rp.Child("maxSurge"), intOrStringValue(ru.MaxSurge), "may not be set when maxUnavailable is non-zero: set maxUnavailable to 0 to surge"))
	case unavailable == 0 && surge == 0:
		errs = append(errs, field.Required(rp.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0: one of them must let the update proceed"))
	}
	switch ru.Type {
	case "", appsv1alpha1.StandardRollingUpdateType:
	case appsv1alpha1.InplaceRollingUpdateType:
		if surge != 0 {
			errs = append(errs, field.Invalid(rp.Child("maxSurge"), intOrStringValue(ru.MaxSurge), "must be 0 for the InPlaceIfPossible type: a pod updated in place has no second pod next to it"))
		}
	case appsv1alpha1.DeprecatedSurgingRollingUpdateType:
		if unavailable != 0 {
			errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), intOrStringValue(ru.MaxUnavailable), "must be 0 for the Surging type"))
		}
	default:
		errs = append(errs, field.NotSupported(rp.Child("rollingUpdateType"), ru.Type, []string{
			string(appsv1alpha1.StandardRollingUpdateType), string(appsv1alpha1.InplaceRollingUpdateType), string(appsv1alpha1.DeprecatedSurgingRollingUpdateType)}))
	}
	if ru.Partition != nil && *ru.Partition < 0 {
		errs = append(errs, field.Invalid(rp.Child("partition"), *ru.Partition, "must be 0 or more nodes"))
	}
	if ru.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(ru.Selector, metav1validation.LabelSelectorValidationOptions{}, rp.Child("selector"))...)
	}
	return errs
}

// validateLifecycle allows the preDelete and preNormal hooks, each naming labels and finalizers a
// pod can carry; a DaemonSet has no inPlaceUpdate hook.
func validateLifecycle(l *appspub.Lifecycle, p *field.Path) field.ErrorList {
	if l == nil {
		return nil
	}
	var errs field.ErrorList
	if l.InPlaceUpdate != nil {
		errs = append(errs, field.Forbidden(p.Child("inPlaceUpdate"), "is not supported by DaemonSet; use preDelete or preNormal"))
	}
	errs = append(errs, podtemplate.ValidateHook(l.PreDelete, p.Child("preDelete"))...)
	return append(errs, podtemplate.ValidateHook(l.PreNormal, p.Child("preNormal"))...)
}

// nonNegativeIntOrPercent reads a count or a percentage; a percentage above 100% is refused when
// capped. It returns the number (the percentage's number for a percentage) and a message saying
// what would be valid, or "".
func nonNegativeIntOrPercent(v intstr.IntOrString, capped bool) (int, string) {
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return 0, "must be a number of 0 or more, or a percentage"
		}
		return int(v.IntVal), ""
	}
	s, ok := strings.CutSuffix(v.StrVal, "%")
	n, err := strconv.Atoi(s)
	if !ok || err != nil || len(validation.IsValidPercent(v.StrVal)) > 0 {
		return 0, fmt.Sprintf("must be a number or a percentage such as 10%%, not %q", v.StrVal)
	}
	if n < 0 || capped && n > 100 {
		return 0, "must be a percentage from 0% to 100%"
	}
	return n, ""
}

func intOrStringValue(v *intstr.IntOrString) any {
	if v.Type == intstr.Int {
		return v.IntVal
	}
	return v.StrVal
}
