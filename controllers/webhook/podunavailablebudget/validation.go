package podunavailablebudget

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/fieldrule"
)

// validOperations are the values kruise.io/pub-protect-operations may list.
var validOperations = []string{string(policyv1alpha1.PubUpdateOperation), string(policyv1alpha1.PubDeleteOperation), string(policyv1alpha1.PubEvictOperation)}

// validatePub returns every rule pub breaks; old is the budget being replaced on update (nil on
// create), others the namespace's budgets (pub itself among them is skipped).
func validatePub(pub, old *policyv1alpha1.PodUnavailableBudget, others []policyv1alpha1.PodUnavailableBudget) field.ErrorList {
	annotations := field.NewPath("metadata", "annotations")
	var errs field.ErrorList
	if v, ok := pub.Annotations[policyv1alpha1.PubProtectOperationAnnotation]; ok {
		for _, op := range strings.Split(v, ",") {
			if !sets.New(validOperations...).Has(op) {
				errs = append(errs, field.NotSupported(annotations.Key(policyv1alpha1.PubProtectOperationAnnotation), op, validOperations))
			}
		}
	}
	if v, ok := pub.Annotations[policyv1alpha1.PubProtectTotalReplicasAnnotation]; ok {
		if n, err := strconv.ParseInt(v, 10, 32); err != nil || n < 0 {
			errs = append(errs, field.Invalid(annotations.Key(policyv1alpha1.PubProtectTotalReplicasAnnotation), v, "must be a non-negative 32-bit integer"))
		}
	}
	spec := field.NewPath("spec")
	errs = append(errs, validateSpec(&pub.Spec, spec)...)
	if old != nil && (!reflect.DeepEqual(pub.Spec.Selector, old.Spec.Selector) || !reflect.DeepEqual(pub.Spec.TargetReference, old.Spec.TargetReference)) {
		errs = append(errs, field.Forbidden(spec, "spec.selector and spec.targetRef cannot be changed; create a new PodUnavailableBudget instead"))
	}
	if len(errs) == 0 {
		errs = append(errs, validateConflicts(pub, others, spec)...)
	}
	return errs
}

func validateSpec(s *policyv1alpha1.PodUnavailableBudgetSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case !fieldrule.ExactlyOne(&errs, path.Child("selector"), s.Selector != nil, path.Child("targetRef"), s.TargetReference != nil):
	case s.TargetReference != nil:
		ref, p := s.TargetReference, path.Child("targetRef")
		if ref.APIVersion == "" {
			errs = append(errs, field.Required(p.Child("apiVersion"), "the workload's group/version, e.g. apps.kruise.io/v1alpha1"))
		} else if _, err := schema.ParseGroupVersion(ref.APIVersion); err != nil {
			errs = append(errs, field.Invalid(p.Child("apiVersion"), ref.APIVersion, "must be a group/version, e.g. apps.kruise.io/v1alpha1"))
		}
		if ref.Kind == "" {
			errs = append(errs, field.Required(p.Child("kind"), "the workload's kind, e.g. CloneSet"))
		}
		if ref.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), "the workload's name"))
		}
	default:
		p := path.Child("selector")
		errs = append(errs, metavalidation.ValidateLabelSelector(s.Selector, metavalidation.LabelSelectorValidationOptions{}, p)...)
		if len(s.Selector.MatchLabels)+len(s.Selector.MatchExpressions) == 0 {
			errs = append(errs, field.Invalid(p, s.Selector, "must have at least one matchLabels entry or matchExpressions term"))
		}
	}
	switch {
	case !fieldrule.ExactlyOne(&errs, path.Child("maxUnavailable"), s.MaxUnavailable != nil, path.Child("minAvailable"), s.MinAvailable != nil):
	case s.MaxUnavailable != nil:
		errs = append(errs, validateIntOrPercent(*s.MaxUnavailable, path.Child("maxUnavailable"))...)
	default:
		errs = append(errs, validateIntOrPercent(*s.MinAvailable, path.Child("minAvailable"))...)
	}
	return errs
}

// validateIntOrPercent accepts a non-negative integer or a percentage from 0% to 100%.
func validateIntOrPercent(v intstr.IntOrString, p *field.Path) field.ErrorList {
	const want = "must be a non-negative integer or a percentage from 0% to 100%"
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return field.ErrorList{field.Invalid(p, v.IntVal, want)}
		}
		return nil
	}
	s := v.StrVal
	n, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
	if !strings.HasSuffix(s, "%") || err != nil || n < 0 || n > 100 {
		return field.ErrorList{field.Invalid(p, s, want)}
	}
	return nil
}

// validateConflicts refuses a budget whose pods another budget of the namespace already covers:
// the same target (group, kind, name), or selectors 1.8 takes as overlapping (same keys, and
// each key's requirements can be met together).
func validateConflicts(pub *policyv1alpha1.PodUnavailableBudget, others []policyv1alpha1.PodUnavailableBudget, spec *field.Path) field.ErrorList {
	for i := range others {
		o := &others[i]
		if o.Name == pub.Name {
			continue
		}
		if a, b := pub.Spec.TargetReference, o.Spec.TargetReference; a != nil && b != nil {
			ga, _ := schema.ParseGroupVersion(a.APIVersion)
			gb, _ := schema.ParseGroupVersion(b.APIVersion)
			if ga.Group == gb.Group && a.Kind == b.Kind && a.Name == b.Name {
				return field.ErrorList{field.Invalid(spec.Child("targetRef"), fmt.Sprintf("%s %s", a.Kind, a.Name),
					fmt.Sprintf("PodUnavailableBudget %s already covers this workload; a pod can be covered by one budget only", o.Name))}
			}
		}
		if a, b := pub.Spec.Selector, o.Spec.Selector; a != nil && b != nil && looseOverlap(a, b) {
			return field.ErrorList{field.Invalid(spec.Child("selector"), a,
				fmt.Sprintf("overlaps the selector of PodUnavailableBudget %s; a pod can be covered by one budget only", o.Name))}
		}
	}
	return nil
}

// looseOverlap is 1.8's selector conflict rule: both selectors constrain the same label keys,
// and for each key some value can satisfy both.
func looseOverlap(a, b *metav1.LabelSelector) bool {
	ea, eb := requirements(a), requirements(b)
	if len(ea) != len(eb) {
		return false
	}
	for k, ra := range ea {
		rb, ok := eb[k]
		if !ok || !compatible(ra, rb) {
			return false
		}
	}
	return true
}

// requirements folds a selector into one requirement per key; matchLabels become In.
func requirements(s *metav1.LabelSelector) map[string]metav1.LabelSelectorRequirement {
	out := map[string]metav1.LabelSelectorRequirement{}
	for k, v := range s.MatchLabels {
		out[k] = metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{v}}
	}
	for _, e := range s.MatchExpressions {
		out[e.Key] = e
	}
	return out
}

// compatible reports whether some label value (or its absence) satisfies both requirements.
func compatible(a, b metav1.LabelSelectorRequirement) bool {
	if a.Operator == metav1.LabelSelectorOpDoesNotExist || b.Operator == metav1.LabelSelectorOpDoesNotExist {
		return a.Operator == b.Operator || (a.Operator == metav1.LabelSelectorOpNotIn || b.Operator == metav1.LabelSelectorOpNotIn)
	}
	if a.Operator != metav1.LabelSelectorOpIn {
		a, b = b, a
	}
	if a.Operator != metav1.LabelSelectorOpIn {
		return true // Exists or NotIn on both sides: some other value satisfies both
	}
	switch b.Operator {
	case metav1.LabelSelectorOpIn:
		return sets.New(a.Values...).HasAny(b.Values...)
	case metav1.LabelSelectorOpNotIn:
		return !sets.New(b.Values...).IsSuperset(sets.New(a.Values...))
	}
	return true // Exists
}
