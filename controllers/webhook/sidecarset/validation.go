package sidecarset

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/fieldrule"
)

// rules are the settings validation depends on.
type rules struct {
	// patchMetadata is the SidecarSetPatchPodMetadataDefaultsAllowed gate.
	patchMetadata bool
	// namespaceLabels returns the labels of a namespace and whether it exists; used to tell
	// whether a namespaceSelector can select a SidecarSet's spec.namespace.
	namespaceLabels func(name string) (labels.Set, bool)
}

// validateSidecarSet checks a SidecarSet being created (old nil) or updated against the rules
// CEL cannot express, and against the other SidecarSets (others may include s itself, which is
// skipped) that can select the same pods.
func validateSidecarSet(s, old *appsv1alpha1.SidecarSet, others []*appsv1alpha1.SidecarSet, r rules) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMeta(&s.ObjectMeta, false, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, validateSpec(s, r, field.NewPath("spec"))...)
	if old != nil {
		errs = append(errs, validateUpdate(&s.Spec, &old.Spec, field.NewPath("spec"))...)
	}
	if len(errs) > 0 {
		return errs
	}
	return validateConflicts(s, others, r, field.NewPath("spec"))
}

func validateSpec(s *appsv1alpha1.SidecarSet, r rules, p *field.Path) field.ErrorList {
	spec := &s.Spec
	var errs field.ErrorList
	errs = append(errs, validateSelector(spec.Selector, p.Child("selector"), true)...)
	if spec.Namespace != "" && spec.NamespaceSelector != nil {
		errs = append(errs, field.Forbidden(p.Child("namespaceSelector"), "must be unset when spec.namespace is set; use one of the two"))
	}
	if spec.Namespace != "" {
		for _, msg := range validation.IsDNS1123Label(spec.Namespace) {
			errs = append(errs, field.Invalid(p.Child("namespace"), spec.Namespace, msg))
		}
	}
	if spec.NamespaceSelector != nil {
		errs = append(errs, validateSelector(spec.NamespaceSelector, p.Child("namespaceSelector"), false)...)
	}
	if len(spec.Containers) == 0 && len(spec.InitContainers) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), "list at least one container or init container"))
	}

	volumes := sets.New[string]()
	for i, v := range spec.Volumes {
		errs = append(errs, fieldrule.Unique(p.Child("volumes").Index(i).Child("name"), v.Name, volumes, validation.IsDNS1123Label)...)
	}

	names := sets.New[string]()
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		cp := p.Child("initContainers").Index(i)
		// HotUpgrade is accepted as 1.8 accepts it: a native sidecar is injected as the pair, and
		// another init container, which runs to completion, as itself.
		errs = append(errs, validateContainer(c, names, cp)...)
		if inject.IsNativeSidecar(&c.Container) && spec.UpdateStrategy.Type == appsv1alpha1.RollingUpdateSidecarSetStrategyType {
			errs = append(errs, field.Invalid(p.Child("updateStrategy", "type"), spec.UpdateStrategy.Type,
				fmt.Sprintf("must be NotUpdate: init container %q has restartPolicy Always and cannot be updated in place", c.Name)))
		}
	}
	for i := range spec.Containers {
		errs = append(errs, validateContainer(&spec.Containers[i], names, p.Child("containers").Index(i))...)
	}
	// A sidecar mounts the SidecarSet's volumes, or, with shareVolumePolicy enabled, the pod's;
	// a mount of a name in neither fails the pod, so it is caught here unless shared.
	check := func(cs []appsv1alpha1.SidecarContainer, list *field.Path) {
		for i := range cs {
			if cs[i].ShareVolumePolicy.Type == appsv1alpha1.ShareVolumePolicyEnabled {
				continue
			}
			for j, m := range cs[i].VolumeMounts {
				if !volumes.Has(m.Name) {
					errs = append(errs, field.NotFound(list.Index(i).Child("volumeMounts").Index(j).Child("name"), m.Name))
				}
			}
		}
	}
	check(spec.InitContainers, p.Child("initContainers"))
	check(spec.Containers, p.Child("containers"))

	errs = append(errs, validateUpdateStrategy(&spec.UpdateStrategy, p.Child("updateStrategy"))...)
	errs = append(errs, validateInjectionStrategy(&spec.InjectionStrategy, p.Child("injectionStrategy"))...)
	errs = append(errs, validatePatchPodMetadata(spec.PatchPodMetadata, r, p.Child("patchPodMetadata"))...)
	return errs
}

func validateSelector(sel *metav1.LabelSelector, p *field.Path, required bool) field.ErrorList {
	if sel == nil {
		if required {
			return field.ErrorList{field.Required(p, "a label selector for the pods to inject")}
		}
		return nil
	}
	errs := metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, p)
	if required && len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(p, sel, "must not be empty: an empty selector would inject into every pod"))
	}
	return errs
}

func validateContainer(c *appsv1alpha1.SidecarContainer, names sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(c.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
	}
	if names.Has(c.Name) {
		errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
	}
	names.Insert(c.Name)
	if strings.TrimSpace(c.Image) == "" {
		errs = append(errs, field.Required(p.Child("image"), "the sidecar's image"))
	}
	errs = append(errs, fieldrule.Enum(p.Child("podInjectPolicy"), c.PodInjectPolicy, appsv1alpha1.BeforeAppContainerType, appsv1alpha1.AfterAppContainerType)...)
	errs = append(errs, fieldrule.Enum(p.Child("shareVolumePolicy", "type"), c.ShareVolumePolicy.Type, appsv1alpha1.ShareVolumePolicyEnabled, appsv1alpha1.ShareVolumePolicyDisabled)...)
	us := c.UpgradeStrategy
	switch us.UpgradeType {
	case appsv1alpha1.SidecarContainerColdUpgrade:
	case appsv1alpha1.SidecarContainerHotUpgrade:
		ep := p.Child("upgradeStrategy", "hotUpgradeEmptyImage")
		if us.HotUpgradeEmptyImage == "" {
			errs = append(errs, field.Required(ep, "HotUpgrade needs the image the idle container of the pair runs"))
		} else if us.HotUpgradeEmptyImage == c.Image {
			errs = append(errs, field.Invalid(ep, us.HotUpgradeEmptyImage, "must differ from the sidecar's image"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("upgradeStrategy", "upgradeType"), us.UpgradeType,
			[]string{string(appsv1alpha1.SidecarContainerColdUpgrade), string(appsv1alpha1.SidecarContainerHotUpgrade)}))
	}
	for i, t := range c.TransferEnv {
		errs = append(errs, validateTransferEnv(t, p.Child("transferEnv").Index(i))...)
	}
	return errs
}

// fieldRefPath matches the pod fields a transferEnv may read the source container name from.
var fieldRefPath = regexp.MustCompile(`^(metadata\.name|metadata\.(labels|annotations)\['[^']+'\])$`)

func validateTransferEnv(t appsv1alpha1.TransferEnvVar, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	from := t.SourceContainerNameFrom != nil && t.SourceContainerNameFrom.FieldRef != nil
	switch {
	case t.SourceContainerName == "" && !from:
		errs = append(errs, field.Required(p.Child("sourceContainerName"), "set sourceContainerName or sourceContainerNameFrom.fieldRef"))
	case t.SourceContainerName != "" && from:
		errs = append(errs, field.Forbidden(p.Child("sourceContainerNameFrom"), "must be unset when sourceContainerName is set"))
	}
	if from {
		fp := t.SourceContainerNameFrom.FieldRef.FieldPath
		if !fieldRefPath.MatchString(fp) {
			errs = append(errs, field.Invalid(p.Child("sourceContainerNameFrom", "fieldRef", "fieldPath"), fp,
				"must be metadata.name, metadata.labels['<key>'] or metadata.annotations['<key>']"))
		}
	}
	if t.EnvName == "" && len(t.EnvNames) == 0 {
		errs = append(errs, field.Required(p.Child("envName"), "set envName or envNames"))
	}
	return errs
}

func validateUpdateStrategy(s *appsv1alpha1.SidecarSetUpdateStrategy, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, fieldrule.Enum(p.Child("type"), s.Type, appsv1alpha1.NotUpdateSidecarSetStrategyType, appsv1alpha1.RollingUpdateSidecarSetStrategyType)...)
	errs = append(errs, validateSelector(s.Selector, p.Child("selector"), false)...)
	if s.Selector != nil && intStrSet(s.Partition) {
		errs = append(errs, field.Forbidden(p.Child("partition"), "must be 0 when updateStrategy.selector is set; use one of the two"))
	}
	errs = append(errs, validateIntOrPercent(s.Partition, p.Child("partition"))...)
	errs = append(errs, validateIntOrPercent(s.MaxUnavailable, p.Child("maxUnavailable"))...)
	if ps := s.PriorityStrategy; ps != nil {
		pp := p.Child("priorityStrategy")
		if len(ps.WeightPriority) > 0 && len(ps.OrderPriority) > 0 {
			errs = append(errs, field.Forbidden(pp.Child("orderPriority"), "must be unset when weightPriority is set; use one of the two"))
		}
		for i, w := range ps.WeightPriority {
			wp := pp.Child("weightPriority").Index(i)
			if w.Weight < 0 || w.Weight > 100 {
				errs = append(errs, field.Invalid(wp.Child("weight"), w.Weight, "must be between 0 and 100"))
			}
			errs = append(errs, validateSelector(&w.MatchSelector, wp.Child("matchSelector"), false)...)
		}
		for i, o := range ps.OrderPriority {
			if o.OrderedKey == "" {
				errs = append(errs, field.Required(pp.Child("orderPriority").Index(i).Child("orderedKey"), "a label key"))
			}
		}
	}
	seen := sets.New[string]()
	for i, term := range s.ScatterStrategy {
		tp := p.Child("scatterStrategy").Index(i)
		if term.Key == "" || term.Value == "" {
			errs = append(errs, field.Required(tp, "key and value are both required"))
			continue
		}
		k := term.Key + "=" + term.Value
		if seen.Has(k) {
			errs = append(errs, field.Duplicate(tp, k))
		}
		seen.Insert(k)
	}
	return errs
}

func intStrSet(v *intstr.IntOrString) bool {
	if v == nil {
		return false
	}
	if v.Type == intstr.Int {
		return v.IntVal != 0
	}
	return v.StrVal != "" && v.StrVal != "0%"
}

var percent = regexp.MustCompile(`^[0-9]+%$`)

func validateIntOrPercent(v *intstr.IntOrString, p *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return field.ErrorList{field.Invalid(p, v.IntVal, "must be a non-negative number or a percentage such as 10%")}
		}
		return nil
	}
	if !percent.MatchString(v.StrVal) {
		return field.ErrorList{field.Invalid(p, v.StrVal, "must be a non-negative number or a percentage such as 10%")}
	}
	return nil
}

func validateInjectionStrategy(s *appsv1alpha1.SidecarSetInjectionStrategy, p *field.Path) field.ErrorList {
	r := s.Revision
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	rp := p.Child("revision")
	if (r.RevisionName == nil || *r.RevisionName == "") && (r.CustomVersion == nil || *r.CustomVersion == "") {
		errs = append(errs, field.Required(rp.Child("revisionName"), "set revisionName or customVersion"))
	}
	errs = append(errs, fieldrule.Enum(rp.Child("policy"), r.Policy, appsv1alpha1.AlwaysSidecarSetInjectRevisionPolicy, appsv1alpha1.PartialSidecarSetInjectRevisionPolicy)...)
	return errs
}

func validatePatchPodMetadata(patches []appsv1alpha1.SidecarSetPatchPodMetadata, r rules, p *field.Path) field.ErrorList {
	if len(patches) == 0 {
		return nil
	}
	var errs field.ErrorList
	if !r.patchMetadata {
		return field.ErrorList{field.Forbidden(p, "needs the SidecarSetPatchPodMetadataDefaultsAllowed feature gate; enable it or remove patchPodMetadata")}
	}
	keys := sets.New[string]()
	for i, patch := range patches {
		pp := p.Index(i)
		if len(patch.Annotations) == 0 {
			errs = append(errs, field.Required(pp.Child("annotations"), "at least one annotation"))
		}
		errs = append(errs, apimachineryvalidation.ValidateAnnotations(patch.Annotations, pp.Child("annotations"))...)
		errs = append(errs, fieldrule.Enum(pp.Child("patchPolicy"), patch.PatchPolicy, appsv1alpha1.SidecarSetRetainPatchPolicy, appsv1alpha1.SidecarSetOverwritePatchPolicy, appsv1alpha1.SidecarSetMergePatchJsonPatchPolicy)...)
		for _, k := range slices.Sorted(maps.Keys(patch.Annotations)) {
			if keys.Has(k) {
				errs = append(errs, field.Duplicate(pp.Child("annotations").Key(k), k))
			}
			keys.Insert(k)
		}
	}
	return errs
}

// validateUpdate checks what may change: a container's upgradeType is fixed once it exists,
// since pods already carry one or two containers for it.
func validateUpdate(spec, old *appsv1alpha1.SidecarSetSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	was := map[string]appsv1alpha1.SidecarContainerUpgradeType{}
	for _, c := range old.Containers {
		was[c.Name] = c.UpgradeStrategy.UpgradeType
	}
	for i, c := range spec.Containers {
		if t, ok := was[c.Name]; ok && t != "" && t != c.UpgradeStrategy.UpgradeType {
			errs = append(errs, field.Invalid(p.Child("containers").Index(i).Child("upgradeStrategy", "upgradeType"), c.UpgradeStrategy.UpgradeType,
				fmt.Sprintf("cannot change from %s for an existing container; add a container of another name instead", t)))
		}
	}
	return errs
}

// validateConflicts refuses what two SidecarSets selecting the same pods would both inject:
// a container or init container of one name, a volume of one name but another definition, or an
// annotation both write when either overwrites it.
func validateConflicts(s *appsv1alpha1.SidecarSet, others []*appsv1alpha1.SidecarSet, r rules, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	sorted := append([]*appsv1alpha1.SidecarSet(nil), others...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, o := range sorted {
		if o.Name == s.Name || !namespacesOverlap(s, o, r.namespaceLabels) || !selectorsOverlap(s.Spec.Selector, o.Spec.Selector) {
			continue
		}
		theirs := sets.New[string]()
		for _, c := range o.Spec.InitContainers {
			theirs.Insert(c.Name)
		}
		for _, c := range o.Spec.Containers {
			theirs.Insert(c.Name)
		}
		conflict := func(list *field.Path, cs []appsv1alpha1.SidecarContainer) {
			for i, c := range cs {
				if theirs.Has(c.Name) {
					errs = append(errs, field.Invalid(list.Index(i).Child("name"), c.Name, fmt.Sprintf(
						"SidecarSet %q and SidecarSet %q both inject a container named %q into the pods they both select; rename the container in one of them or make their selectors disjoint",
						s.Name, o.Name, c.Name)))
				}
			}
		}
		conflict(p.Child("initContainers"), s.Spec.InitContainers)
		conflict(p.Child("containers"), s.Spec.Containers)
		for i := range s.Spec.Volumes {
			v := &s.Spec.Volumes[i]
			for j := range o.Spec.Volumes {
				if o.Spec.Volumes[j].Name == v.Name && !apiequality.Semantic.DeepEqual(v, &o.Spec.Volumes[j]) {
					errs = append(errs, field.Invalid(p.Child("volumes").Index(i).Child("name"), v.Name, fmt.Sprintf(
						"SidecarSet %q defines volume %q differently from SidecarSet %q, which selects the same pods; define it the same way or rename it",
						s.Name, v.Name, o.Name)))
				}
			}
		}
		errs = append(errs, annotationConflicts(s, o, p.Child("patchPodMetadata"))...)
	}
	return errs
}

func annotationConflicts(s, o *appsv1alpha1.SidecarSet, p *field.Path) field.ErrorList {
	theirs := map[string]appsv1alpha1.SidecarSetPatchPolicyType{}
	for _, patch := range o.Spec.PatchPodMetadata {
		if patch.PatchPolicy == appsv1alpha1.SidecarSetRetainPatchPolicy {
			continue
		}
		for k := range patch.Annotations {
			theirs[k] = patch.PatchPolicy
		}
	}
	var errs field.ErrorList
	for i, patch := range s.Spec.PatchPodMetadata {
		if patch.PatchPolicy == appsv1alpha1.SidecarSetRetainPatchPolicy {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(patch.Annotations)) {
			policy, ok := theirs[k]
			if !ok {
				continue
			}
			// Two JSON merges compose; an overwrite on either side does not.
			if patch.PatchPolicy == appsv1alpha1.SidecarSetOverwritePatchPolicy || policy == appsv1alpha1.SidecarSetOverwritePatchPolicy {
				errs = append(errs, field.Invalid(p.Index(i).Child("annotations").Key(k), k, fmt.Sprintf(
					"SidecarSet %q and SidecarSet %q both write annotation %q into the pods they both select and one overwrites it; use MergePatchJson in both or drop it from one",
					s.Name, o.Name, k)))
			}
		}
	}
	return errs
}

// namespacesOverlap tells whether some namespace can hold pods of both SidecarSets.
func namespacesOverlap(a, b *appsv1alpha1.SidecarSet, nsLabels func(string) (labels.Set, bool)) bool {
	an, bn := a.Spec.Namespace, b.Spec.Namespace
	switch {
	case an != "" && bn != "":
		return an == bn
	case an != "" && b.Spec.NamespaceSelector != nil:
		return namespaceSelected(an, b.Spec.NamespaceSelector, nsLabels)
	case bn != "" && a.Spec.NamespaceSelector != nil:
		return namespaceSelected(bn, a.Spec.NamespaceSelector, nsLabels)
	case a.Spec.NamespaceSelector != nil && b.Spec.NamespaceSelector != nil:
		// As in 1.8, two selectors meet unless they cannot both match one namespace.
		return selectorsOverlap(a.Spec.NamespaceSelector, b.Spec.NamespaceSelector)
	}
	// Both unrestricted, or one unrestricted: some namespace may match both.
	return true
}

func namespaceSelected(ns string, sel *metav1.LabelSelector, nsLabels func(string) (labels.Set, bool)) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false
	}
	if nsLabels == nil {
		return true
	}
	l, ok := nsLabels(ns)
	if !ok {
		// A namespace that cannot be read (deleted, or not created yet) is not selected, as in
		// 1.8: a SidecarSet bound to a deleted namespace does not block others.
		return false
	}
	return s.Matches(l)
}

// selectorsOverlap tells whether some label set can match both selectors. It is exact for
// matchLabels and the set-based operators against matchLabels, and assumes an overlap where
// it cannot tell.
func selectorsOverlap(a, b *metav1.LabelSelector) bool {
	if a == nil || b == nil {
		return true
	}
	return !excludes(a, b) && !excludes(b, a)
}

// excludes reports whether a's matchLabels contradict something b requires.
func excludes(a, b *metav1.LabelSelector) bool {
	for k, v := range a.MatchLabels {
		if w, ok := b.MatchLabels[k]; ok && w != v {
			return true
		}
		for _, e := range b.MatchExpressions {
			if e.Key != k {
				continue
			}
			in := sets.New(e.Values...).Has(v)
			switch e.Operator {
			case metav1.LabelSelectorOpIn:
				if !in {
					return true
				}
			case metav1.LabelSelectorOpNotIn:
				if in {
					return true
				}
			case metav1.LabelSelectorOpDoesNotExist:
				return true
			}
		}
	}
	return false
}
