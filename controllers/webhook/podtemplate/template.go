package podtemplate

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
)

// Rules are what one kind asks of its pod template beyond valid labels, at least one
// container, and containers with unique DNS-1123 names.
type Rules struct {
	// RestartPolicies are the restartPolicy values allowed, in the order a refusal lists them.
	RestartPolicies []corev1.RestartPolicy
	// UnsetRestartPolicy allows an empty restartPolicy (the apiserver defaults it to Always).
	UnsetRestartPolicy bool
	// NoDeadline, when set, forbids activeDeadlineSeconds with this reason.
	NoDeadline string
	// Volumes checks the volumes' names (DNS-1123, unique) and that every mount names a volume
	// or one of Claims.
	Volumes bool
	// Claims are the volume claim templates' names, which count as volumes.
	Claims []string
	// Volume, when set, adds what the kind asks of each volume, under its path.
	Volume func(vp *field.Path, v *corev1.Volume) field.ErrorList
	// Image requires every container to name an image.
	Image bool
}

// Workload returns the Rules of a long-running workload's pods: restartPolicy Always (or
// unset), and activeDeadlineSeconds forbidden for noDeadline.
func Workload(noDeadline string) Rules {
	return Rules{RestartPolicies: []corev1.RestartPolicy{corev1.RestartPolicyAlways}, UnsetRestartPolicy: true, NoDeadline: noDeadline, Volumes: true}
}

// Validate returns every rule of r the pod template t breaks, each naming its field under p.
func Validate(t *corev1.PodTemplateSpec, p *field.Path, r Rules) field.ErrorList {
	errs := ValidateBasics(t, p, r)
	sp := p.Child("spec")
	volumes := sets.New[string]()
	if r.Volumes {
		for i := range t.Spec.Volumes {
			v := &t.Spec.Volumes[i]
			vp := sp.Child("volumes").Index(i)
			errs = append(errs, uniqueName(vp.Child("name"), v.Name, volumes)...)
			if r.Volume != nil {
				errs = append(errs, r.Volume(vp, v)...)
			}
		}
		volumes.Insert(r.Claims...)
	}
	names := sets.New[string]()
	check := func(cp *field.Path, c *corev1.Container) {
		errs = append(errs, uniqueName(cp.Child("name"), c.Name, names)...)
		if r.Image && c.Image == "" {
			errs = append(errs, field.Required(cp.Child("image"), "the image the container runs"))
		}
		for j, m := range c.VolumeMounts {
			if r.Volumes && !volumes.Has(m.Name) {
				errs = append(errs, field.NotFound(cp.Child("volumeMounts").Index(j).Child("name"), m.Name))
			}
		}
	}
	for i := range t.Spec.InitContainers {
		check(sp.Child("initContainers").Index(i), &t.Spec.InitContainers[i])
	}
	for i := range t.Spec.Containers {
		check(sp.Child("containers").Index(i), &t.Spec.Containers[i])
	}
	return errs
}

// ValidateBasics returns what Validate checks before the volumes and containers: the labels,
// the restartPolicy, activeDeadlineSeconds, and that there is a container.
func ValidateBasics(t *corev1.PodTemplateSpec, p *field.Path, r Rules) field.ErrorList {
	errs := metav1validation.ValidateLabels(t.Labels, p.Child("metadata", "labels"))
	sp := p.Child("spec")
	if !(r.UnsetRestartPolicy && t.Spec.RestartPolicy == "") && !contains(r.RestartPolicies, t.Spec.RestartPolicy) {
		valid := make([]string, 0, len(r.RestartPolicies))
		for _, rp := range r.RestartPolicies {
			valid = append(valid, string(rp))
		}
		errs = append(errs, field.NotSupported(sp.Child("restartPolicy"), t.Spec.RestartPolicy, valid))
	}
	if r.NoDeadline != "" && t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(sp.Child("activeDeadlineSeconds"), r.NoDeadline))
	}
	if len(t.Spec.Containers) == 0 {
		errs = append(errs, field.Required(sp.Child("containers"), "at least one container"))
	}
	return errs
}

// uniqueName checks that name is a DNS-1123 label not in seen, and adds it to seen.
func uniqueName(p *field.Path, name string, seen sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	if seen.Has(name) {
		errs = append(errs, field.Duplicate(p, name))
	}
	seen.Insert(name)
	return errs
}

func contains(list []corev1.RestartPolicy, v corev1.RestartPolicy) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// SetSelector is the wording of the CloneSet's and the Advanced StatefulSet's selector refusals.
var SetSelector = SelectorRules{
	Required: "a label selector matching spec.template.metadata.labels",
	Empty:    "must have at least one matchLabels entry or matchExpressions term",
	Mismatch: "must match spec.selector %q", Unparsed: true,
}

// ValidateLifecycle checks that the lifecycle hooks l holds (preDelete, inPlaceUpdate,
// preNormal, in that order) name labels and finalizers a pod can carry.
func ValidateLifecycle(l *appspub.Lifecycle, p *field.Path) field.ErrorList {
	if l == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, ValidateHook(l.PreDelete, p.Child("preDelete"))...)
	errs = append(errs, ValidateHook(l.InPlaceUpdate, p.Child("inPlaceUpdate"))...)
	return append(errs, ValidateHook(l.PreNormal, p.Child("preNormal"))...)
}

// ValidateHook checks that the hook h (nil passes) names labels and finalizers a pod can carry.
func ValidateHook(h *appspub.LifecycleHook, hp *field.Path) field.ErrorList {
	if h == nil {
		return nil
	}
	errs := metav1validation.ValidateLabels(h.LabelsHandler, hp.Child("labelsHandler"))
	for i, f := range h.FinalizersHandler {
		for _, msg := range validation.IsQualifiedName(f) {
			errs = append(errs, field.Invalid(hp.Child("finalizersHandler").Index(i), f, msg))
		}
	}
	return errs
}

// ValidatePriority checks an update priority strategy (nil passes): weightPriority or
// orderPriority, not both; weights from 0 to 100 over selectors that convert (and, with
// nonEmpty, select something); ordered keys that are set.
func ValidatePriority(s *appspub.UpdatePriorityStrategy, p *field.Path, nonEmpty bool) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	if len(s.WeightPriority) > 0 && len(s.OrderPriority) > 0 {
		errs = append(errs, field.Forbidden(p, "set either weightPriority or orderPriority, not both"))
	}
	for i, w := range s.WeightPriority {
		wp := p.Child("weightPriority").Index(i)
		if w.Weight < 0 || w.Weight > 100 {
			errs = append(errs, field.Invalid(wp.Child("weight"), w.Weight, "must be between 0 and 100"))
		}
		sp := wp.Child("matchSelector")
		if nonEmpty && len(w.MatchSelector.MatchLabels)+len(w.MatchSelector.MatchExpressions) == 0 {
			errs = append(errs, field.Required(sp, "a non-empty label selector"))
		} else if _, err := metav1.LabelSelectorAsSelector(&w.MatchSelector); err != nil {
			errs = append(errs, field.Invalid(sp, w.MatchSelector, fmt.Sprintf("not a valid label selector: %v", err)))
		}
	}
	for i, o := range s.OrderPriority {
		if o.OrderedKey == "" {
			errs = append(errs, field.Required(p.Child("orderPriority").Index(i).Child("orderedKey"), "a pod label key"))
		}
	}
	return errs
}

// SelectorRules are the words a kind refuses its spec.selector with.
type SelectorRules struct {
	// Required is the detail of a missing selector; Empty the reason an empty one is invalid.
	Required, Empty string
	// Mismatch is the reason the template's labels are invalid when the selector does not
	// match them; a %q in it stands for the selector.
	Mismatch string
	// Unparsed refuses a selector that does not convert ("not a valid label selector: ...");
	// without it, that selector only gets the errors of the label selector validation.
	Unparsed bool
}

// ValidateSelector checks the workload's spec.selector sel (under p.Child("selector")) and that
// it matches the template's labels (under p.Child("template", "metadata", "labels")).
func ValidateSelector(sel *metav1.LabelSelector, templateLabels map[string]string, p *field.Path, r SelectorRules) field.ErrorList {
	sp := p.Child("selector")
	if sel == nil {
		return field.ErrorList{field.Required(sp, r.Required)}
	}
	errs := metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, sp)
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		return append(errs, field.Invalid(sp, sel, r.Empty))
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		if r.Unparsed {
			errs = append(errs, field.Invalid(sp, sel, fmt.Sprintf("not a valid label selector: %v", err)))
		}
		return errs
	}
	if !selector.Matches(labels.Set(templateLabels)) {
		msg := r.Mismatch
		if strings.Contains(msg, "%q") {
			msg = fmt.Sprintf(msg, selector.String())
		}
		errs = append(errs, field.Invalid(p.Child("template", "metadata", "labels"), templateLabels, msg))
	}
	return errs
}
