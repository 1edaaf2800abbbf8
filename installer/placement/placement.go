package placement

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ZoneMode says how manager replicas spread across zones.
type ZoneMode string

const (
	// ZoneNone leaves zones to the scheduler.
	ZoneNone ZoneMode = "none"
	// ZonePreferred is soft pod anti-affinity across zones and, beneath it, across nodes: a
	// cluster with a single zone still spreads the replicas over different nodes.
	ZonePreferred ZoneMode = "preferred"
	// ZoneEven is a topology spread with maxSkew 1 and DoNotSchedule.
	ZoneEven ZoneMode = "even"
	// ZoneRequired is hard pod anti-affinity: at most one replica per zone.
	ZoneRequired ZoneMode = "required"
)

// NodeMode says how manager nodes are chosen.
type NodeMode string

const (
	NodesAny    NodeMode = "none"
	NodesByName NodeMode = "nodes"
	NodesByPool NodeMode = "pools"
	NodesCustom NodeMode = "custom"
)

const (
	// ZoneLabel is the well-known zone label.
	ZoneLabel = corev1.LabelTopologyZone
	// HostnameLabel picks nodes by name.
	HostnameLabel = corev1.LabelHostname
	// DefaultPoolLabel is the node label that names a node pool when the user gives none.
	DefaultPoolLabel = "kruise-addon.io/node-pool"
	// DefaultTolerationSeconds is how long the manager stays on a not-ready or unreachable node.
	DefaultTolerationSeconds int64 = 60
)

// ManagerPodLabels select the manager's pods; the chart labels them so.
func ManagerPodLabels() map[string]string {
	return map[string]string{"control-plane": "controller-manager"}
}

// Options are the user's placement choices.
type Options struct {
	ZoneMode ZoneMode `json:"zoneMode,omitempty"`
	// Nodes are node names (kubernetes.io/hostname values).
	Nodes []string `json:"nodes,omitempty"`
	// Pools are values of PoolLabel.
	Pools     []string `json:"pools,omitempty"`
	PoolLabel string   `json:"poolLabel,omitempty"`
	// Expressions are custom node label requirements, all of which must hold.
	Expressions []corev1.NodeSelectorRequirement `json:"expressions,omitempty"`
	// Tolerations are the user's, added to the manager's defaults.
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// DaemonExcludeNodes keeps the daemon off these nodes, e.g. those whose runtime it cannot use.
	DaemonExcludeNodes []string `json:"daemonExcludeNodes,omitempty"`
}

// Default fills the zone mode: preferred for more than one replica, none otherwise.
func (o Options) Default(replicas int32) Options {
	if o.ZoneMode == "" {
		o.ZoneMode = ZoneNone
		if replicas > 1 {
			o.ZoneMode = ZonePreferred
		}
	}
	if o.PoolLabel == "" {
		o.PoolLabel = DefaultPoolLabel
	}
	return o
}

// NodeMode returns which node affinity the options ask for.
func (o Options) NodeMode() NodeMode {
	switch {
	case len(o.Nodes) > 0:
		return NodesByName
	case len(o.Pools) > 0:
		return NodesByPool
	case len(o.Expressions) > 0:
		return NodesCustom
	}
	return NodesAny
}

// Validate checks the zone mode, the node names, that at most one node mode is chosen and the
// expressions.
func Validate(o Options) field.ErrorList {
	errs := ValidateNodeNames(field.NewPath("nodes"), o.Nodes)
	errs = append(errs, ValidateNodeNames(field.NewPath("daemonExcludeNodes"), o.DaemonExcludeNodes)...)
	switch o.ZoneMode {
	case "", ZoneNone, ZonePreferred, ZoneEven, ZoneRequired:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("zoneMode"), o.ZoneMode, []ZoneMode{ZoneNone, ZonePreferred, ZoneEven, ZoneRequired}))
	}
	set := 0
	for _, n := range []int{len(o.Nodes), len(o.Pools), len(o.Expressions)} {
		if n > 0 {
			set++
		}
	}
	if set > 1 {
		errs = append(errs, field.Forbidden(field.NewPath("nodeAffinity"), "choose one of nodes, node pools or node selector expressions"))
	}
	for i, e := range o.Expressions {
		p := field.NewPath("expressions").Index(i)
		switch e.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(e.Values) == 0 {
				errs = append(errs, field.Required(p.Child("values"), "In and NotIn need values"))
			}
		case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
			if len(e.Values) != 1 {
				errs = append(errs, field.Invalid(p.Child("values"), e.Values, "Gt and Lt need one integer"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), e.Operator, []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt}))
		}
	}
	for i, t := range o.Tolerations {
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(field.NewPath("tolerations").Index(i), t, "a toleration without a key must use operator Exists"))
		}
	}
	return errs
}

// ValidateNodeNames checks names as names of Nodes: DNS-1123 subdomains, as the apiserver
// requires, of at most 63 characters, since the placement matches them as values of the
// kubernetes.io/hostname label. p names the field (or flag); each bad name is one error.
func ValidateNodeNames(p *field.Path, names []string) field.ErrorList {
	var errs field.ErrorList
	for i, n := range names {
		msgs := validation.IsDNS1123Subdomain(n)
		if len(msgs) == 0 && len(n) > validation.LabelValueMaxLength {
			msgs = append(msgs, fmt.Sprintf("must be no more than %d characters: nodes are chosen by their %s label, whose values are at most that long",
				validation.LabelValueMaxLength, HostnameLabel))
		}
		if len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Index(i), n, "not a node name: "+strings.Join(msgs, "; ")))
		}
	}
	return errs
}

// ParseNodeSelector reads a label selector ("pool in (a,b),gpu!=true,spot") into node
// requirements.
func ParseNodeSelector(s string) ([]corev1.NodeSelectorRequirement, error) {
	sel, err := labels.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("parse node selector %q: %w", s, err)
	}
	reqs, _ := sel.Requirements()
	var out []corev1.NodeSelectorRequirement
	for _, r := range reqs {
		var op corev1.NodeSelectorOperator
		switch r.Operator() {
		case selection.In, selection.Equals, selection.DoubleEquals:
			op = corev1.NodeSelectorOpIn
		case selection.NotIn, selection.NotEquals:
			op = corev1.NodeSelectorOpNotIn
		case selection.Exists:
			op = corev1.NodeSelectorOpExists
		case selection.DoesNotExist:
			op = corev1.NodeSelectorOpDoesNotExist
		case selection.GreaterThan:
			op = corev1.NodeSelectorOpGt
		case selection.LessThan:
			op = corev1.NodeSelectorOpLt
		default:
			return nil, fmt.Errorf("parse node selector %q: operator %s is not supported", s, r.Operator())
		}
		vals := r.Values().List()
		out = append(out, corev1.NodeSelectorRequirement{Key: r.Key(), Operator: op, Values: vals})
	}
	return out, nil
}

// ParseToleration reads "key[=value][:effect]" or "key:effect" or "*" (tolerate everything).
func ParseToleration(s string) (corev1.Toleration, error) {
	if s == "*" {
		return corev1.Toleration{Operator: corev1.TolerationOpExists}, nil
	}
	kv, effect, _ := strings.Cut(s, ":")
	key, value, hasValue := strings.Cut(kv, "=")
	if key == "" {
		return corev1.Toleration{}, fmt.Errorf("parse toleration %q: empty key", s)
	}
	t := corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffect(effect)}
	if hasValue {
		t.Operator, t.Value = corev1.TolerationOpEqual, value
	}
	switch t.Effect {
	case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		return corev1.Toleration{}, fmt.Errorf("parse toleration %q: effect must be NoSchedule, PreferNoSchedule or NoExecute", s)
	}
	return t, nil
}

// NodeRequirements returns what a node must satisfy to take a manager pod.
func (o Options) NodeRequirements() []corev1.NodeSelectorRequirement {
	switch o.NodeMode() {
	case NodesByName:
		return []corev1.NodeSelectorRequirement{{Key: HostnameLabel, Operator: corev1.NodeSelectorOpIn, Values: sorted(o.Nodes)}}
	case NodesByPool:
		label := o.PoolLabel
		if label == "" {
			label = DefaultPoolLabel
		}
		return []corev1.NodeSelectorRequirement{{Key: label, Operator: corev1.NodeSelectorOpIn, Values: sorted(o.Pools)}}
	case NodesCustom:
		return slices.Clone(o.Expressions)
	}
	return nil
}

// ManagerTolerations are the tolerations the manager pods end up with: not-ready and
// unreachable NoExecute for DefaultTolerationSeconds, then the user's.
func (o Options) ManagerTolerations() []corev1.Toleration {
	secs := DefaultTolerationSeconds
	out := []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs},
	}
	return append(out, o.Tolerations...)
}

// DaemonTolerations tolerate every taint: the daemon serves every node.
func DaemonTolerations() []corev1.Toleration {
	return []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
}

// Weights of the preferred mode's anti-affinity: a different zone counts for more than a
// different node.
const zoneWeight, nodeWeight = 100, 50

// ManagerAffinity is the manager's node affinity and zone anti-affinity; nil when neither applies.
func (o Options) ManagerAffinity() *corev1.Affinity {
	a := &corev1.Affinity{}
	if reqs := o.NodeRequirements(); len(reqs) > 0 {
		a.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: reqs}},
		}}
	}
	term := corev1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: ManagerPodLabels()}, TopologyKey: ZoneLabel}
	switch o.ZoneMode {
	case ZonePreferred:
		// Zones first; where they cannot differ (one zone), nodes do.
		node := term
		node.TopologyKey = HostnameLabel
		a.PodAntiAffinity = &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
			{Weight: zoneWeight, PodAffinityTerm: term},
			{Weight: nodeWeight, PodAffinityTerm: node},
		}}
	case ZoneRequired:
		a.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term}}
	}
	if a.NodeAffinity == nil && a.PodAntiAffinity == nil {
		return nil
	}
	return a
}

// TopologySpread is the "even" mode's constraint; nil for the other modes.
func (o Options) TopologySpread() []corev1.TopologySpreadConstraint {
	if o.ZoneMode != ZoneEven {
		return nil
	}
	return []corev1.TopologySpreadConstraint{{
		MaxSkew:           1,
		TopologyKey:       ZoneLabel,
		WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector:     &metav1.LabelSelector{MatchLabels: ManagerPodLabels()},
	}}
}

// DaemonAffinity keeps the daemon off DaemonExcludeNodes; nil when there are none.
func (o Options) DaemonAffinity() *corev1.Affinity {
	if len(o.DaemonExcludeNodes) == 0 {
		return nil
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: HostnameLabel, Operator: corev1.NodeSelectorOpNotIn, Values: sorted(o.DaemonExcludeNodes)},
		}}},
	}}}
}

// Values returns the chart values for the placement, in the chart's values shape: manager
// affinity, topologySpreadConstraints, the user's tolerations (the chart adds the not-ready and
// unreachable ones), and the daemon's affinity and tolerate-all tolerations.
func (o Options) Values() (map[string]any, error) {
	manager := map[string]any{
		"affinity":                  map[string]any{},
		"topologySpreadConstraints": []any{},
		"tolerations":               []any{},
		"defaultTolerationSeconds":  DefaultTolerationSeconds,
	}
	daemon := map[string]any{"affinity": map[string]any{}}
	var err error
	if a := o.ManagerAffinity(); a != nil {
		if manager["affinity"], err = toMap(a); err != nil {
			return nil, err
		}
	}
	if c := o.TopologySpread(); c != nil {
		if manager["topologySpreadConstraints"], err = toList(c); err != nil {
			return nil, err
		}
	}
	if len(o.Tolerations) > 0 {
		if manager["tolerations"], err = toList(o.Tolerations); err != nil {
			return nil, err
		}
	}
	if a := o.DaemonAffinity(); a != nil {
		if daemon["affinity"], err = toMap(a); err != nil {
			return nil, err
		}
	}
	if daemon["tolerations"], err = toList(DaemonTolerations()); err != nil {
		return nil, err
	}
	return map[string]any{"manager": manager, "daemon": daemon}, nil
}

func toMap(obj any) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %T to values: %w", obj, err)
	}
	return m, nil
}

func toList[T any](items []T) ([]any, error) {
	out := make([]any, 0, len(items))
	for i := range items {
		m, err := toMap(&items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
