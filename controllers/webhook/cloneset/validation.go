package cloneset

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/podtemplate"
)

// rules are the settings validation depends on.
type rules struct {
	// shortHash is the CloneSetShortHash gate: pods carry only the revision's hash in their
	// controller-revision-hash label, not the revision's name.
	shortHash bool
}

// validateCloneSet checks a CloneSet being created (old nil) or updated. pods are the pods
// named by spec.scaleStrategy.podsToDelete that exist; a name newly listed there without a
// pod in pods is reported as missing. Entries already listed in old are not checked again:
// the controller removes them once their pod is gone.
func validateCloneSet(cs, old *appsv1alpha1.CloneSet, r rules, pods ...*corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	if old != nil {
		errs = append(errs, apimachineryvalidation.ValidateObjectMetaUpdate(&cs.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))...)
		errs = append(errs, validateSpecUpdate(&cs.Spec, &old.Spec)...)
	} else {
		// The name cannot change, so an existing CloneSet is never refused for it.
		errs = append(errs, validateNameLength(cs.Name, r, field.NewPath("metadata", "name"))...)
	}
	errs = append(errs, apimachineryvalidation.ValidateObjectMeta(&cs.ObjectMeta, true,
		apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	var oldSpec *appsv1alpha1.CloneSetSpec
	if old != nil {
		oldSpec = &old.Spec
	}
	errs = append(errs, validateSpec(&cs.Spec, oldSpec, cs.UID, podsByName(pods), field.NewPath("spec"))...)
	return errs
}

// instanceIDLength is the length of the instance ID the controller appends to the CloneSet's
// name to name each pod.
const instanceIDLength = 5

// maxRevisionHashLength is the longest hash a revision name ends in: revision.Hash encodes the
// decimal digits of a 32-bit FNV sum, one character for each digit.
var maxRevisionHashLength = len(strconv.FormatUint(math.MaxUint32, 10))

// maxNameLength is the longest CloneSet name whose pods can be created. Each pod carries its
// revision's name, revision.Name(<name>, <hash>), in the controller-revision-hash label, whose
// value is at most 63 characters: 52 with the longest hash. With CloneSetShortHash the label
// holds the hash alone, and the limit is the pod name, <name>-<instance ID>, within 253.
func maxNameLength(r rules) int {
	if r.shortHash {
		return validation.DNS1123SubdomainMaxLength - len("-") - instanceIDLength
	}
	longestHash := strings.Repeat("0", maxRevisionHashLength)
	return validation.LabelValueMaxLength - (len(revision.Name("", longestHash)))
}

func validateNameLength(name string, r rules, p *field.Path) field.ErrorList {
	limit := maxNameLength(r)
	if len(name) <= limit {
		return nil
	}
	why := fmt.Sprintf("each pod's %s label holds <name>-<revision hash of up to %d characters>, and a label value is at most %d characters",
		appsv1.ControllerRevisionHashLabelKey, maxRevisionHashLength, validation.LabelValueMaxLength)
	if r.shortHash {
		why = fmt.Sprintf("each pod is named <name>-<%d-character instance ID>, and a pod name is at most %d characters",
			instanceIDLength, validation.DNS1123SubdomainMaxLength)
	}
	return field.ErrorList{field.Invalid(p, name, fmt.Sprintf("must be no more than %d characters: %s", limit, why))}
}

// updatableSpecFields are the spec fields a CloneSet may change after creation.
const updatableSpecFields = "replicas, template, volumeClaimTemplates, scaleStrategy, updateStrategy, " +
	"revisionHistoryLimit, minReadySeconds and lifecycle"

func validateSpecUpdate(spec, old *appsv1alpha1.CloneSetSpec) field.ErrorList {
	var errs field.ErrorList
	// Copy every updatable field from old; whatever still differs was not allowed to change.
	rest := spec.DeepCopy()
	rest.Replicas = old.Replicas
	rest.Template = old.Template
	rest.VolumeClaimTemplates = old.VolumeClaimTemplates
	rest.ScaleStrategy = old.ScaleStrategy
	rest.UpdateStrategy = old.UpdateStrategy
	rest.RevisionHistoryLimit = old.RevisionHistoryLimit
	rest.MinReadySeconds = old.MinReadySeconds
	rest.Lifecycle = old.Lifecycle
	if !apiequality.Semantic.DeepEqual(rest, old) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"),
			"only "+updatableSpecFields+" may change after creation; spec.selector is immutable"))
	}
	if spec.UpdateStrategy.Type == appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType {
		if p := nonImageTemplateChange(&old.Template.Spec, &spec.Template.Spec); p != nil {
			errs = append(errs, field.Forbidden(p,
				"with updateStrategy.type InPlaceOnly only the images of existing containers may change in spec.template.spec"))
		}
	}
	return errs
}

// nonImageTemplateChange returns the first path under spec.template.spec that differs between
// old and cur other than the image of a container present in both, or nil when only images
// changed.
func nonImageTemplateChange(old, cur *corev1.PodSpec) *field.Path {
	base := field.NewPath("spec", "template", "spec")
	if len(old.Containers) != len(cur.Containers) {
		return base.Child("containers")
	}
	o, c := old.DeepCopy(), cur.DeepCopy()
	for i := range c.Containers {
		o.Containers[i].Image, c.Containers[i].Image = "", ""
		if !apiequality.Semantic.DeepEqual(o.Containers[i], c.Containers[i]) {
			return base.Child("containers").Index(i)
		}
	}
	if !apiequality.Semantic.DeepEqual(o, c) {
		return base
	}
	return nil
}

func validateSpec(spec, old *appsv1alpha1.CloneSetSpec, uid types.UID, pods map[string]*corev1.Pod, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	replicas := int32(1)
	if spec.Replicas != nil {
		replicas = *spec.Replicas
		if replicas < 0 {
			errs = append(errs, field.Invalid(p.Child("replicas"), replicas, "must be 0 or more"))
		}
	}
	errs = append(errs, validateSelector(spec, p)...)
	errs = append(errs, validateTemplate(spec, p.Child("template"))...)
	errs = append(errs, podtemplate.ValidateLifecycle(spec.Lifecycle, p.Child("lifecycle"))...)

	var oldScale *appsv1alpha1.CloneSetScaleStrategy
	if old != nil {
		oldScale = &old.ScaleStrategy
	}
	errs = append(errs, validateScaleStrategy(&spec.ScaleStrategy, oldScale, uid, pods, int(replicas), p.Child("scaleStrategy"))...)
	errs = append(errs, validateUpdateStrategy(&spec.UpdateStrategy, int(replicas), p.Child("updateStrategy"))...)
	return errs
}

func validateSelector(spec *appsv1alpha1.CloneSetSpec, p *field.Path) field.ErrorList {
	return podtemplate.ValidateSelector(spec.Selector, spec.Template.Labels, p, podtemplate.SetSelector)
}

// validateTemplate checks what a CloneSet needs of its pod template. The apiserver validates
// each pod fully when the controller creates it; these are the mistakes that would make every
// pod fail, caught when the user writes the CloneSet.
func validateTemplate(spec *appsv1alpha1.CloneSetSpec, p *field.Path) field.ErrorList {
	r := podtemplate.Workload("must be unset: the pods of a CloneSet run until it deletes them")
	// Volume claim templates count as volumes, mounted by the volume of the same name.
	for _, pvc := range spec.VolumeClaimTemplates {
		r.Claims = append(r.Claims, pvc.Name)
	}
	return podtemplate.Validate(&spec.Template, p, r)
}

func validateScaleStrategy(s, old *appsv1alpha1.CloneSetScaleStrategy, uid types.UID, pods map[string]*corev1.Pod, replicas int, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.MaxUnavailable != nil {
		_, e := scaled(s.MaxUnavailable, replicas, p.Child("maxUnavailable"))
		errs = append(errs, e...)
	}

	dp := p.Child("podsToDelete")
	if dups := duplicates(s.PodsToDelete); len(dups) > 0 {
		return append(errs, field.Invalid(dp, s.PodsToDelete, fmt.Sprintf("must list each pod once; listed more than once: %s", strings.Join(dups, ", "))))
	}
	added := sets.New(s.PodsToDelete...)
	if old != nil {
		added.Delete(old.PodsToDelete...)
	}
	// A name that is no pod and a name of another owner's pod get the same answer, so that the
	// webhook does not tell whether a pod exists.
	var notOurs []string
	for _, name := range sets.List(added) {
		pod, ok := pods[name]
		if ok {
			if owner := metav1.GetControllerOf(pod); owner == nil || owner.UID != uid {
				ok = false
			}
		}
		switch {
		case !ok:
			notOurs = append(notOurs, name)
		case pod.DeletionTimestamp != nil:
			errs = append(errs, field.Invalid(dp, name, "must name a pod that is not already terminating"))
		}
	}
	if len(notOurs) > 0 {
		errs = append(errs, field.Invalid(dp, shortList(notOurs, maxNamesShown),
			fmt.Sprintf("must name existing pods of this CloneSet; %d listed are not", len(notOurs))))
	}
	return errs
}

// maxNamesShown is how many names one error message lists.
const maxNamesShown = 20

// shortList joins the first n names and says how many more there are.
func shortList(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

func validateUpdateStrategy(s *appsv1alpha1.CloneSetUpdateStrategy, replicas int, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch s.Type {
	case appsv1alpha1.RecreateCloneSetUpdateStrategyType,
		appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType,
		appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType:
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), s.Type, []string{
			string(appsv1alpha1.RecreateCloneSetUpdateStrategyType),
			string(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType),
			string(appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType),
		}))
	}

	_, e := scaled(s.Partition, replicas, p.Child("partition"))
	errs = append(errs, e...)
	maxUnavailable, e := scaled(s.MaxUnavailable, replicas, p.Child("maxUnavailable"))
	errs = append(errs, e...)
	maxSurge, e := scaled(s.MaxSurge, replicas, p.Child("maxSurge"))
	errs = append(errs, e...)
	if s.Type == appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType && maxSurge > 0 {
		errs = append(errs, field.Invalid(p.Child("maxSurge"), s.MaxSurge.String(),
			"must be 0 with type InPlaceOnly, which never creates extra pods"))
	}
	if replicas > 0 && maxUnavailable < 1 && maxSurge < 1 {
		errs = append(errs, field.Invalid(p.Child("maxUnavailable"), intOrStringValue(s.MaxUnavailable),
			fmt.Sprintf("maxUnavailable and maxSurge must not both come to less than 1 pod of %d replicas, or the update cannot progress; raise one of them", replicas)))
	}

	errs = append(errs, podtemplate.ValidatePriority(s.PriorityStrategy, p.Child("priorityStrategy"), true)...)
	if err := s.ScatterStrategy.Validate(); err != nil {
		errs = append(errs, field.Invalid(p.Child("scatterStrategy"), s.ScatterStrategy, fmt.Sprintf("each term needs a non-empty key and must be listed once: %v", err)))
	}
	return errs
}

// scaled resolves an absolute number or a percentage of replicas, rounding up; nil is 0.
func scaled(v *intstr.IntOrString, replicas int, p *field.Path) (int, field.ErrorList) {
	if v == nil {
		return 0, nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, replicas, true)
	if err != nil || (v.Type == intstr.String && !strings.HasSuffix(v.StrVal, "%")) {
		return 0, field.ErrorList{field.Invalid(p, v.String(), "must be an integer or a percentage such as \"20%\"")}
	}
	// The sign of the value itself, not of the scaled count: -10% of 5 rounds up to 0.
	if raw, _ := intstr.GetScaledValueFromIntOrPercent(v, 100, false); raw < 0 {
		return 0, field.ErrorList{field.Invalid(p, v.String(), "must be 0 or more")}
	}
	return n, nil
}

func intOrStringValue(v *intstr.IntOrString) any {
	if v == nil {
		return nil
	}
	return v.String()
}

func duplicates(names []string) []string {
	seen := map[string]int{}
	for _, n := range names {
		seen[n]++
	}
	var dups []string
	for n, c := range seen {
		if c > 1 {
			dups = append(dups, n)
		}
	}
	sort.Strings(dups)
	return dups
}

func podsByName(pods []*corev1.Pod) map[string]*corev1.Pod {
	m := make(map[string]*corev1.Pod, len(pods))
	for _, p := range pods {
		m[p.Name] = p
	}
	return m
}

// validateDeletion enforces the policy.kruise.io/delete-protection label on a CloneSet.
func validateDeletion(cs *appsv1alpha1.CloneSet) error {
	if cs == nil {
		return nil
	}
	return deletionprotection.Workload("CloneSet", cs, cs.Spec.Replicas)
}
