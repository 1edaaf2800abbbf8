package uniteddeployment

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/uniteddeployment/allocate"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
)

// validate checks a UnitedDeployment, and on update (old set) what may change. It is pure.
func validate(ud, old *appsv1alpha1.UnitedDeployment) field.ErrorList {
	spec := &ud.Spec
	p := field.NewPath("spec")
	var errs field.ErrorList
	if spec.Replicas != nil && *spec.Replicas < 0 {
		errs = append(errs, field.Invalid(p.Child("replicas"), *spec.Replicas, "must be 0 or more"))
	}
	sel, selErrs := validateSelector(spec.Selector, p.Child("selector"))
	errs = append(errs, selErrs...)
	if sel != nil {
		errs = append(errs, validateTemplate(&spec.Template, sel, p.Child("template"))...)
	}
	errs = append(errs, validateSubsets(spec, p.Child("topology", "subsets"))...)
	errs = append(errs, validateSubsetReplicas(spec.Replicas, spec.Topology.Subsets, p.Child("topology", "subsets"))...)
	if mu := spec.UpdateStrategy.ManualUpdate; mu != nil {
		names := sets.New[string]()
		for _, s := range spec.Topology.Subsets {
			names.Insert(s.Name)
		}
		for _, name := range sets.List(sets.KeySet(mu.Partitions)) {
			pp := p.Child("updateStrategy", "manualUpdate", "partitions").Key(name)
			if !names.Has(name) {
				errs = append(errs, field.Invalid(pp, name, fmt.Sprintf("no subset is named %q: partitions must name subsets of spec.topology.subsets", name)))
			}
			if mu.Partitions[name] < 0 {
				errs = append(errs, field.Invalid(pp, mu.Partitions[name], "must be 0 or more"))
			}
		}
	}
	if old != nil {
		errs = append(errs, validateUpdate(spec, &old.Spec, p)...)
	}
	return errs
}

func validateSelector(s *metav1.LabelSelector, p *field.Path) (labels.Selector, field.ErrorList) {
	if s == nil {
		return nil, field.ErrorList{field.Required(p, "a label selector that matches the template's labels")}
	}
	if len(s.MatchLabels)+len(s.MatchExpressions) == 0 {
		return nil, field.ErrorList{field.Invalid(p, s, "must have at least one matchLabels entry or matchExpressions term")}
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(p, s, err.Error())}
	}
	return sel, nil
}

// validateTemplate checks that one template is set and, as 1.8 does, that the StatefulSet and
// Deployment templates match the selector and leave replicas and partition to the subsets. A
// cloneSetTemplate is taken as it is: the controller sets its selector, replicas and partition.
// The advancedStatefulSetTemplate's replicas and partition are not refused either: the schema
// defaults them, and the controller overrides them.
func validateTemplate(t *appsv1alpha1.SubsetTemplate, sel labels.Selector, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	for _, set := range []bool{t.StatefulSetTemplate != nil, t.AdvancedStatefulSetTemplate != nil, t.CloneSetTemplate != nil, t.DeploymentTemplate != nil} {
		if set {
			n++
		}
	}
	const kinds = "statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate or deploymentTemplate"
	switch {
	case n == 0:
		return field.ErrorList{field.Required(p, "one of "+kinds)}
	case n > 1:
		return field.ErrorList{field.Invalid(p, n, "set only one of "+kinds)}
	}
	// check: the selector matches the template's labels and its pods', and replicas (when the
	// kind has them) are left to the topology.
	check := func(tp *field.Path, meta metav1.ObjectMeta, podLabels map[string]string, replicas *int32) {
		if !sel.Matches(labels.Set(meta.Labels)) {
			errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), meta.Labels, "spec.selector does not match these labels"))
		}
		if !sel.Matches(labels.Set(podLabels)) {
			errs = append(errs, field.Invalid(tp.Child("spec", "template", "metadata", "labels"), podLabels, "spec.selector does not match these labels"))
		}
		if replicas != nil {
			errs = append(errs, field.Invalid(tp.Child("spec", "replicas"), *replicas, "leave it unset: each subset's replicas come from spec.replicas and spec.topology"))
		}
	}
	switch {
	case t.StatefulSetTemplate != nil:
		tp := p.Child("statefulSetTemplate")
		s := t.StatefulSetTemplate.Spec
		check(tp, t.StatefulSetTemplate.ObjectMeta, s.Template.Labels, s.Replicas)
		if s.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && s.UpdateStrategy.RollingUpdate != nil && s.UpdateStrategy.RollingUpdate.Partition != nil {
			errs = append(errs, field.Invalid(tp.Child("spec", "updateStrategy", "rollingUpdate", "partition"), *s.UpdateStrategy.RollingUpdate.Partition,
				"leave it unset: partitions come from spec.updateStrategy.manualUpdate.partitions"))
		}
	case t.AdvancedStatefulSetTemplate != nil:
		check(p.Child("advancedStatefulSetTemplate"), t.AdvancedStatefulSetTemplate.ObjectMeta, t.AdvancedStatefulSetTemplate.Spec.Template.Labels, nil)
	case t.DeploymentTemplate != nil:
		s := t.DeploymentTemplate.Spec
		check(p.Child("deploymentTemplate"), t.DeploymentTemplate.ObjectMeta, s.Template.Labels, s.Replicas)
	}
	return errs
}

// validateSubsets checks each subset's name, node selector term and tolerations.
func validateSubsets(spec *appsv1alpha1.UnitedDeploymentSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, s := range spec.Topology.Subsets {
		sp := p.Index(i)
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(sp.Child("name"), "a DNS label naming the subset"))
		case seen.Has(s.Name):
			errs = append(errs, field.Duplicate(sp.Child("name"), s.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(s.Name) {
				errs = append(errs, field.Invalid(sp.Child("name"), s.Name, msg))
			}
		}
		seen.Insert(s.Name)
		if len(s.NodeSelectorTerm.MatchExpressions)+len(s.NodeSelectorTerm.MatchFields) > 0 {
			if _, err := nodeaffinity.NewNodeSelector(&corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{s.NodeSelectorTerm}}); err != nil {
				errs = append(errs, field.Invalid(sp.Child("nodeSelectorTerm"), s.NodeSelectorTerm, err.Error()))
			}
		}
		for j, t := range s.Tolerations {
			errs = append(errs, validateToleration(t, sp.Child("tolerations").Index(j))...)
		}
	}
	return errs
}

func validateToleration(t corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
		}
	}
	switch t.Operator {
	case corev1.TolerationOpEqual, "":
		for _, msg := range validation.IsValidLabelValue(t.Value) {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
		}
	case corev1.TolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be empty when operator is Exists"))
		}
		if t.Key == "" && t.Effect != "" && t.Effect != corev1.TaintEffectNoExecute && t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectPreferNoSchedule {
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, []string{"Equal", "Exists"}))
	}
	if t.Key == "" && t.Operator != corev1.TolerationOpExists {
		errs = append(errs, field.Invalid(p.Child("operator"), t.Operator, "must be Exists when key is empty"))
	}
	switch t.Effect {
	case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}))
	}
	if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
		errs = append(errs, field.Invalid(p.Child("effect"), t.Effect, "must be NoExecute when tolerationSeconds is set"))
	}
	return errs
}

// validateSubsetReplicas checks the subsets' replicas add up as 1.8 requires: fixed replicas
// and elastic min/max are not mixed; fixed replicas add up to no more than spec.replicas (and
// to exactly it when every subset sets them, or are all set when spec.replicas is not); elastic
// subsets need spec.replicas, at least one subset without maxReplicas, and minimums no larger
// than maximums.
func validateSubsetReplicas(replicas *int32, subsets []appsv1alpha1.Subset, p *field.Path) field.ErrorList {
	total := allocate.Unset
	if replicas != nil {
		total = *replicas
	}
	var errs field.ErrorList
	var sum, sumMin, sumMax int64
	var nFixed, nMax int
	for i, s := range subsets {
		sp := p.Index(i)
		var n, lo int32
		hi := int32(1000000)
		var err error
		if s.Replicas != nil {
			nFixed++
			if n, err = allocate.Parse(total, *s.Replicas); err != nil {
				errs = append(errs, field.Invalid(sp.Child("replicas"), s.Replicas.String(), err.Error()))
			}
		}
		if s.MinReplicas != nil {
			if lo, err = allocate.Parse(total, *s.MinReplicas); err != nil {
				errs = append(errs, field.Invalid(sp.Child("minReplicas"), s.MinReplicas.String(), err.Error()))
			}
		}
		if s.MaxReplicas != nil {
			nMax++
			if hi, err = allocate.Parse(total, *s.MaxReplicas); err != nil {
				errs = append(errs, field.Invalid(sp.Child("maxReplicas"), s.MaxReplicas.String(), err.Error()))
			}
		}
		if lo > hi {
			errs = append(errs, field.Invalid(sp.Child("minReplicas"), s.MinReplicas.String(), fmt.Sprintf("must not be more than maxReplicas (%d)", hi)))
		}
		sum, sumMin, sumMax = sum+int64(n), sumMin+int64(lo), sumMax+int64(hi)
	}
	elastic := false
	for _, s := range subsets {
		elastic = elastic || s.MinReplicas != nil || s.MaxReplicas != nil
	}
	switch {
	case nFixed > 0 && elastic:
		errs = append(errs, field.Invalid(p, len(subsets), "set either replicas or minReplicas/maxReplicas on the subsets, not both"))
	case elastic:
		if total == allocate.Unset {
			errs = append(errs, field.Required(field.NewPath("spec", "replicas"), "spec.replicas must be set when subsets set minReplicas or maxReplicas"))
		}
		if nMax >= len(subsets) {
			errs = append(errs, field.Invalid(p, nMax, "at least one subset must leave maxReplicas unset, to take the replicas the others cannot"))
		}
		if sumMin > sumMax {
			errs = append(errs, field.Invalid(p, sumMin, fmt.Sprintf("the subsets' minReplicas add up to %d, more than their maxReplicas (%d)", sumMin, sumMax)))
		}
	case total != allocate.Unset:
		if sum > int64(total) {
			errs = append(errs, field.Invalid(p, sum, fmt.Sprintf("the subsets' replicas add up to %d, more than spec.replicas (%d)", sum, total)))
		}
		if nFixed > 0 && nFixed == len(subsets) && sum != int64(total) {
			errs = append(errs, field.Invalid(p, sum, fmt.Sprintf("every subset sets replicas, so they must add up to spec.replicas (%d), not %d", total, sum)))
		}
	case nFixed != len(subsets):
		errs = append(errs, field.Invalid(p, nFixed, "spec.replicas is unset, so every subset must set replicas"))
	}
	return errs
}

// validateUpdate checks what may change: the selector is fixed (every subset workload was made
// with it, and their own selectors cannot change, so a new one would leave the UnitedDeployment
// unable to update any subset); a subset's nodeSelectorTerm and tolerations are fixed once it
// exists; and a StatefulSet or Advanced StatefulSet template may change only its pod template,
// update strategy and replicas, as in 1.8.
func validateUpdate(spec, old *appsv1alpha1.UnitedDeploymentSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !apiequality.Semantic.DeepEqual(spec.Selector, old.Selector) {
		errs = append(errs, field.Forbidden(p.Child("selector"), "may not change: the subset workloads were made with it and their selectors cannot change; create a new UnitedDeployment to select other pods"))
	}
	oldSubsets := map[string]appsv1alpha1.Subset{}
	for _, s := range old.Topology.Subsets {
		oldSubsets[s.Name] = s
	}
	for i, s := range spec.Topology.Subsets {
		o, ok := oldSubsets[s.Name]
		if !ok {
			continue
		}
		sp := p.Child("topology", "subsets").Index(i)
		if !apiequality.Semantic.DeepEqual(o.NodeSelectorTerm, s.NodeSelectorTerm) {
			errs = append(errs, field.Forbidden(sp.Child("nodeSelectorTerm"), "may not change once the subset exists; add a subset with a new name instead"))
		}
		if !apiequality.Semantic.DeepEqual(o.Tolerations, s.Tolerations) {
			errs = append(errs, field.Forbidden(sp.Child("tolerations"), "may not change once the subset exists; add a subset with a new name instead"))
		}
	}
	const msg = "only template, updateStrategy and replicas may change in an update"
	if n, o := spec.Template.StatefulSetTemplate, old.Template.StatefulSetTemplate; n != nil && o != nil {
		rest := n.Spec.DeepCopy()
		rest.Template, rest.UpdateStrategy, rest.Replicas = o.Spec.Template, o.Spec.UpdateStrategy, o.Spec.Replicas
		if !apiequality.Semantic.DeepEqual(*rest, o.Spec) {
			errs = append(errs, field.Forbidden(p.Child("template", "statefulSetTemplate", "spec"), msg))
		}
	}
	if n, o := spec.Template.AdvancedStatefulSetTemplate, old.Template.AdvancedStatefulSetTemplate; n != nil && o != nil {
		rest := n.Spec.DeepCopy()
		rest.Template, rest.UpdateStrategy, rest.Replicas = o.Spec.Template, o.Spec.UpdateStrategy, o.Spec.Replicas
		if !apiequality.Semantic.DeepEqual(*rest, o.Spec) {
			errs = append(errs, field.Forbidden(p.Child("template", "advancedStatefulSetTemplate", "spec"), msg))
		}
	}
	return errs
}

// validateDeletion enforces the policy.kruise.io/delete-protection label on a UnitedDeployment.
func validateDeletion(ud *appsv1alpha1.UnitedDeployment) error {
	if ud == nil {
		return nil
	}
	return deletionprotection.Workload("UnitedDeployment", ud, ud.Spec.Replicas)
}
