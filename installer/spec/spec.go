package spec

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Preset names a manager size.
type Preset string

const (
	// Small is one manager replica, for clusters under LargeClusterNodes nodes.
	Small Preset = "small"
	// Large is HA: several replicas with a disruption budget and zone anti-affinity.
	Large Preset = "large"
	// Custom takes replicas and resources from the user.
	Custom Preset = "custom"
)

// LargeClusterNodes is the node count from which Large is recommended.
const LargeClusterNodes = 50

// MaxReplicas bounds custom replicas: leader election leaves all but one idle.
const MaxReplicas = 10

// Resources are the manager container's requests and limits, as Kubernetes quantities.
type Resources struct {
	RequestsCPU    string `json:"requestsCPU"`
	RequestsMemory string `json:"requestsMemory"`
	LimitsCPU      string `json:"limitsCPU"`
	LimitsMemory   string `json:"limitsMemory"`
}

// Spec is a resolved manager size.
type Spec struct {
	Preset    Preset    `json:"preset"`
	Replicas  int32     `json:"replicas"`
	Resources Resources `json:"resources"`
	// PDB turns on a PodDisruptionBudget with minAvailable 1.
	PDB bool `json:"pdb"`
}

// Overrides are the user's changes to a preset; zero fields keep the preset's value.
type Overrides struct {
	Replicas  int32
	Resources Resources
}

// For resolves a preset with the user's overrides and validates the result. Overrides are only
// allowed with Custom, whose own defaults are Small's.
func For(p Preset, o Overrides) (Spec, error) {
	var s Spec
	switch p {
	case Small, "":
		s = Spec{Preset: Small, Replicas: 1, Resources: Resources{"100m", "256Mi", "1", "1Gi"}}
	case Large:
		s = Spec{Preset: Large, Replicas: 3, Resources: Resources{"500m", "1Gi", "2", "2Gi"}, PDB: true}
	case Custom:
		s = Spec{Preset: Custom, Replicas: 1, Resources: Resources{"100m", "256Mi", "1", "1Gi"}}
	default:
		return Spec{}, field.ErrorList{field.NotSupported(field.NewPath("spec"), string(p), []string{string(Small), string(Large), string(Custom)})}.ToAggregate()
	}
	if p != Custom && (o != Overrides{}) {
		return Spec{}, field.ErrorList{field.Forbidden(field.NewPath("spec"), fmt.Sprintf("replicas and resources can only be set with --spec custom, not %s", p))}.ToAggregate()
	}
	if o.Replicas != 0 {
		s.Replicas = o.Replicas
	}
	r := &s.Resources
	for _, f := range []struct {
		dst *string
		v   string
	}{
		{&r.RequestsCPU, o.Resources.RequestsCPU}, {&r.RequestsMemory, o.Resources.RequestsMemory},
		{&r.LimitsCPU, o.Resources.LimitsCPU}, {&r.LimitsMemory, o.Resources.LimitsMemory},
	} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
	s.PDB = s.PDB || s.Replicas > 1
	if errs := Validate(s); len(errs) > 0 {
		return Spec{}, errs.ToAggregate()
	}
	return s, nil
}

// Validate checks replicas and that every quantity parses and no request exceeds its limit.
func Validate(s Spec) field.ErrorList {
	var errs field.ErrorList
	if s.Replicas < 1 || s.Replicas > MaxReplicas {
		errs = append(errs, field.Invalid(field.NewPath("replicas"), s.Replicas, fmt.Sprintf("must be between 1 and %d", MaxReplicas)))
	}
	res := field.NewPath("resources")
	parse := func(name, v string) (resource.Quantity, bool) {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			errs = append(errs, field.Invalid(res.Child(name), v, "must be a quantity such as 500m or 1Gi"))
			return q, false
		}
		if q.Sign() <= 0 {
			errs = append(errs, field.Invalid(res.Child(name), v, "must be greater than zero"))
			return q, false
		}
		return q, true
	}
	rc, ok1 := parse("requestsCPU", s.Resources.RequestsCPU)
	lc, ok2 := parse("limitsCPU", s.Resources.LimitsCPU)
	rm, ok3 := parse("requestsMemory", s.Resources.RequestsMemory)
	lm, ok4 := parse("limitsMemory", s.Resources.LimitsMemory)
	if ok1 && ok2 && rc.Cmp(lc) > 0 {
		errs = append(errs, field.Invalid(res.Child("requestsCPU"), s.Resources.RequestsCPU, "must not exceed limitsCPU "+s.Resources.LimitsCPU))
	}
	if ok3 && ok4 && rm.Cmp(lm) > 0 {
		errs = append(errs, field.Invalid(res.Child("requestsMemory"), s.Resources.RequestsMemory, "must not exceed limitsMemory "+s.Resources.LimitsMemory))
	}
	return errs
}

// Recommend returns the preset for a cluster of nodes nodes.
func Recommend(nodes int) Preset {
	if nodes >= LargeClusterNodes {
		return Large
	}
	return Small
}

// Warnings says what is risky about s on a cluster of nodes nodes.
func Warnings(s Spec, nodes int) []string {
	var w []string
	if s.Preset == Small && nodes >= LargeClusterNodes {
		w = append(w, fmt.Sprintf("the cluster has %d nodes and has outgrown the small spec (under %d nodes); use --spec large", nodes, LargeClusterNodes))
	}
	if s.Replicas == 1 {
		w = append(w, "a single manager replica: while it is down the webhook is unreachable and, with failurePolicy Fail, creating or updating the add-on's resources is blocked; use --spec large for HA")
	}
	return w
}

// Values returns the chart values for s, under manager.
func (s Spec) Values() map[string]any {
	return map[string]any{
		"manager": map[string]any{
			"replicas": int64(s.Replicas),
			"resources": map[string]any{
				"requests": map[string]any{"cpu": s.Resources.RequestsCPU, "memory": s.Resources.RequestsMemory},
				"limits":   map[string]any{"cpu": s.Resources.LimitsCPU, "memory": s.Resources.LimitsMemory},
			},
			"podDisruptionBudget": map[string]any{"enabled": s.PDB, "minAvailable": int64(1)},
		},
	}
}
