package workloadspread

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/workloadref"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread/spread"
)

// Handlers serves the WorkloadSpread validating handler at its 1.8 path,
// /validate-apps-kruise-io-v1alpha1-workloadspread.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Version: "v1alpha1", Name: "workloadspread",
	Validating: func(e admit.Env) admission.Handler {
		reader := e.Manager.GetAPIReader()
		return NewHandler(reader, workloadref.Config{Reader: reader, Namespace: e.ManagerNamespace})
	},
}.Handlers

// NewHandler returns the handler, which refuses WorkloadSpreads that break a rule with every
// field error. It lists the namespace's WorkloadSpreads through others, live, so two created
// together cannot both claim one workload unseen by a cache; the kit keeps that list in the
// request's namespace. A targetRef of a kind that is not built in is checked against the
// custom-workload whitelist config holds.
func NewHandler(others client.Reader, config workloadref.Config) admission.Handler {
	kind := admit.Kind{Name: "workloadspread", Decoder: admission.NewDecoder(apis.NewScheme()), Namespaced: true, WithOld: true, PassDeleting: true}
	return admit.Validating(kind, func(ctx context.Context, ws, old *appsv1alpha1.WorkloadSpread) (field.ErrorList, error) {
		list := &appsv1alpha1.WorkloadSpreadList{}
		if err := kind.ListOthers(ctx, others, list, ws.Namespace); err != nil {
			return nil, err
		}
		var custom *workloadref.Whitelist
		if ref := ws.Spec.TargetReference; ref != nil {
			if gk, err := groupKind(ref); err == nil && !workloadref.IsBuiltIn(gk) {
				if custom, err = config.WorkloadSpreadWhitelist(ctx); err != nil {
					return nil, err
				}
			}
		}
		return validateWorkloadSpread(ws, old, list.Items, custom), nil
	})
}

// MaxUnschedulableDuration is how long an Adaptive subset stays unschedulable before it is
// tried again; rescheduleCriticalSeconds is bounded by it so a pod does not cycle through
// unschedulable subsets for ever.
const MaxUnschedulableDuration = 300 * time.Second

// supported lists the targets a WorkloadSpread may point at, by group and kind, with the
// apiVersions a user may write.
var supported = map[schema.GroupKind]string{
	{Group: "apps.kruise.io", Kind: "CloneSet"}:    "apps.kruise.io/v1alpha1",
	{Group: "apps.kruise.io", Kind: "StatefulSet"}: "apps.kruise.io/v1beta1 or apps.kruise.io/v1alpha1",
	{Group: "apps", Kind: "Deployment"}:            "apps/v1",
	{Group: "apps", Kind: "ReplicaSet"}:            "apps/v1",
	{Group: "apps", Kind: "StatefulSet"}:           "apps/v1",
	{Group: "batch", Kind: "Job"}:                  "batch/v1",
}

func groupKind(ref *appsv1alpha1.TargetReference) (schema.GroupKind, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupKind{}, err
	}
	return schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, nil
}

// validateWorkloadSpread returns every rule ws breaks; others are the other WorkloadSpreads of
// its namespace, old is the object being replaced on update (nil on create), custom the
// whitelisted custom workloads a targetRef may name besides the built-in kinds.
func validateWorkloadSpread(ws, old *appsv1alpha1.WorkloadSpread, others []appsv1alpha1.WorkloadSpread, custom *workloadref.Whitelist) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateTargetRef(ws, others, custom, spec.Child("targetRef"))
	errs = append(errs, validateSubsets(ws, spec.Child("subsets"))...)
	errs = append(errs, validateStrategy(ws, spec.Child("scheduleStrategy"))...)
	if f := ws.Spec.TargetFilter; f != nil && f.Selector != nil {
		if _, err := metav1.LabelSelectorAsSelector(f.Selector); err != nil {
			errs = append(errs, field.Invalid(spec.Child("targetFilter", "selector"), f.Selector, err.Error()))
		}
	}
	if old != nil && old.Spec.TargetReference != nil && ws.Spec.TargetReference != nil {
		a, errA := groupKind(ws.Spec.TargetReference)
		b, errB := groupKind(old.Spec.TargetReference)
		if errA == nil && errB == nil && (a != b || ws.Spec.TargetReference.Name != old.Spec.TargetReference.Name) {
			errs = append(errs, field.Forbidden(spec.Child("targetRef"), "targetRef cannot change; create a new WorkloadSpread for another workload"))
		}
	}
	return errs
}

func validateTargetRef(ws *appsv1alpha1.WorkloadSpread, others []appsv1alpha1.WorkloadSpread, custom *workloadref.Whitelist, path *field.Path) field.ErrorList {
	ref := ws.Spec.TargetReference
	if ref == nil {
		return field.ErrorList{field.Required(path, "name the workload to spread: apiVersion, kind and name")}
	}
	var errs field.ErrorList
	if ref.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "the name of the workload to spread"))
	}
	gk, err := groupKind(ref)
	if err != nil {
		return append(errs, field.Invalid(path.Child("apiVersion"), ref.APIVersion, err.Error()))
	}
	if _, ok := supported[gk]; !ok && custom.Lookup(gk) == nil {
		return append(errs, field.NotSupported(path.Child("kind"), ref.Kind,
			[]string{"CloneSet (apps.kruise.io)", "StatefulSet (apps.kruise.io)", "Deployment (apps)", "ReplicaSet (apps)", "StatefulSet (apps)", "Job (batch)",
				"a custom workload listed in " + workloadref.WorkloadSpreadWhitelistKey + " of ConfigMap " + workloadref.ConfigMapName}))
	}
	for _, o := range others {
		if o.Name == ws.Name || o.Spec.TargetReference == nil {
			continue
		}
		ogk, err := groupKind(o.Spec.TargetReference)
		if err == nil && ogk == gk && o.Spec.TargetReference.Name == ref.Name {
			errs = append(errs, field.Invalid(path, fmt.Sprintf("%s %s", ref.Kind, ref.Name),
				fmt.Sprintf("already spread by WorkloadSpread %s; a workload takes one WorkloadSpread", o.Name)))
			break
		}
	}
	return errs
}

func validateSubsets(ws *appsv1alpha1.WorkloadSpread, path *field.Path) field.ErrorList {
	subsets := ws.Spec.Subsets
	if len(subsets) == 0 {
		return field.ErrorList{field.Required(path, "list at least one subset")}
	}
	var errs field.ErrorList
	names := map[string]bool{}
	var firstType *intstr.Type
	percentSum := 0
	stateful := false
	if ref := ws.Spec.TargetReference; ref != nil {
		if gk, err := groupKind(ref); err == nil && gk.Kind == "StatefulSet" {
			stateful = true
		}
	}
	for i := range subsets {
		s := &subsets[i]
		p := path.Index(i)
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(p.Child("name"), "a subset name such as zone-a"))
		case names[s.Name]:
			errs = append(errs, field.Duplicate(p.Child("name"), s.Name))
		}
		names[s.Name] = true
		if t := s.RequiredNodeSelectorTerm; t != nil {
			errs = append(errs, validateTerm(t, p.Child("requiredNodeSelectorTerm"))...)
		}
		for j := range s.PreferredNodeSelectorTerms {
			pt := &s.PreferredNodeSelectorTerms[j]
			pp := p.Child("preferredNodeSelectorTerms").Index(j)
			if pt.Weight < 1 || pt.Weight > 100 {
				errs = append(errs, field.Invalid(pp.Child("weight"), pt.Weight, "must be between 1 and 100"))
			}
			errs = append(errs, validateTerm(&pt.Preference, pp.Child("preference"))...)
		}
		for j, tol := range s.Tolerations {
			errs = append(errs, validateToleration(tol, p.Child("tolerations").Index(j))...)
		}
		if len(s.Patch.Raw) > 0 {
			if _, err := spread.ApplyPatch(&corev1.Pod{}, s.Patch.Raw); err != nil {
				errs = append(errs, field.Invalid(p.Child("patch"), string(s.Patch.Raw), "must be a strategic merge patch of a pod: "+err.Error()))
			}
		}
		if m := s.MaxReplicas; m != nil {
			mp := p.Child("maxReplicas")
			if firstType == nil {
				firstType = &m.Type
			} else if m.Type != *firstType {
				errs = append(errs, field.Invalid(mp, m.String(), "every subset's maxReplicas must be of one type: all integers or all percentages"))
				continue
			}
			if stateful && m.Type != intstr.Int {
				errs = append(errs, field.Invalid(mp, m.String(), "must be an integer for a StatefulSet target, whose pods take subsets by ordinal"))
				continue
			}
			v, err := intstr.GetScaledValueFromIntOrPercent(m, 100, true)
			if err != nil || v < 0 {
				errs = append(errs, field.Invalid(mp, m.String(), "must be a non-negative integer or a percentage such as 30%"))
				continue
			}
			if m.Type == intstr.String {
				percentSum += v
				if percentSum > 100 {
					errs = append(errs, field.Invalid(mp, m.String(), "the subsets' percentages add up to more than 100%"))
				}
			}
		}
	}
	if firstType != nil && *firstType == intstr.String && percentSum < 100 && subsets[len(subsets)-1].MaxReplicas != nil {
		errs = append(errs, field.Invalid(path.Index(len(subsets)-1).Child("maxReplicas"), subsets[len(subsets)-1].MaxReplicas.String(),
			fmt.Sprintf("percentages add up to %d%%; they must add up to 100%% unless the last subset has no maxReplicas", percentSum)))
	}
	return errs
}

func validateTerm(t *corev1.NodeSelectorTerm, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range t.MatchExpressions {
		p := path.Child("matchExpressions").Index(i)
		if r.Key == "" {
			errs = append(errs, field.Required(p.Child("key"), "a node label key"))
		}
		errs = append(errs, validateRequirement(r, p)...)
	}
	for i, r := range t.MatchFields {
		p := path.Child("matchFields").Index(i)
		if r.Key != "metadata.name" {
			errs = append(errs, field.NotSupported(p.Child("key"), r.Key, []string{"metadata.name"}))
		}
		errs = append(errs, validateRequirement(r, p)...)
	}
	return errs
}

func validateRequirement(r corev1.NodeSelectorRequirement, p *field.Path) field.ErrorList {
	switch r.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			return field.ErrorList{field.Required(p.Child("values"), "at least one value for operator "+string(r.Operator))}
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			return field.ErrorList{field.Forbidden(p.Child("values"), "no values for operator "+string(r.Operator))}
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			return field.ErrorList{field.Required(p.Child("values"), "exactly one integer value for operator "+string(r.Operator))}
		}
	default:
		return field.ErrorList{field.NotSupported(p.Child("operator"), r.Operator,
			[]string{"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})}
	}
	return nil
}

func validateToleration(t corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch t.Operator {
	case "", corev1.TolerationOpEqual:
		if t.Key == "" {
			errs = append(errs, field.Required(p.Child("key"), "a taint key; an empty key needs operator Exists"))
		}
	case corev1.TolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be empty for operator Exists"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, []string{"Equal", "Exists"}))
	}
	switch t.Effect {
	case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}))
	}
	if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
		errs = append(errs, field.Invalid(p.Child("tolerationSeconds"), *t.TolerationSeconds, "only with effect NoExecute"))
	}
	return errs
}

func validateStrategy(ws *appsv1alpha1.WorkloadSpread, path *field.Path) field.ErrorList {
	st := ws.Spec.ScheduleStrategy
	var errs field.ErrorList
	switch st.Type {
	case "", appsv1alpha1.FixedWorkloadSpreadScheduleStrategyType, appsv1alpha1.AdaptiveWorkloadSpreadScheduleStrategyType:
	default:
		errs = append(errs, field.NotSupported(path.Child("type"), st.Type, []string{"Fixed", "Adaptive"}))
	}
	if st.Adaptive == nil {
		return errs
	}
	if st.Type != appsv1alpha1.AdaptiveWorkloadSpreadScheduleStrategyType {
		errs = append(errs, field.Invalid(path.Child("type"), st.Type, "must be Adaptive when adaptive is set"))
	}
	subsets := ws.Spec.Subsets
	if len(subsets) > 1 && subsets[len(subsets)-1].MaxReplicas != nil {
		errs = append(errs, field.Invalid(path.Child("adaptive"), "last subset with maxReplicas",
			"the last subset must have no maxReplicas under Adaptive, so rescheduled pods always have somewhere to go"))
	}
	limit := int32(1<<31 - 1)
	if len(subsets) > 1 {
		limit = int32(MaxUnschedulableDuration.Seconds()-5) / int32(len(subsets)-1)
	}
	if s := st.Adaptive.RescheduleCriticalSeconds; s != nil && (*s < 0 || *s > limit) {
		errs = append(errs, field.Invalid(path.Child("adaptive", "rescheduleCriticalSeconds"), *s,
			fmt.Sprintf("must be between 0 and %d with %d subsets", limit, len(subsets))))
	}
	return errs
}
