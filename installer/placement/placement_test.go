package placement

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func managerLabels() map[string]any { return map[string]any{"control-plane": "controller-manager"} }

func TestValues(t *testing.T) {
	zoneTerm := map[string]any{"labelSelector": map[string]any{"matchLabels": managerLabels()}, "topologyKey": "topology.kubernetes.io/zone"}
	nodeTerm := map[string]any{"labelSelector": map[string]any{"matchLabels": managerLabels()}, "topologyKey": "kubernetes.io/hostname"}
	cases := map[string]struct {
		opts         Options
		wantManager  map[string]any
		wantDaemonAf map[string]any
	}{
		"no choices leave affinity and spread empty": {
			opts:        Options{ZoneMode: ZoneNone},
			wantManager: map[string]any{"affinity": map[string]any{}, "topologySpreadConstraints": []any{}, "tolerations": []any{}, "defaultTolerationSeconds": int64(60)},
		},
		"preferred is soft zone anti-affinity, then soft node anti-affinity for single-zone clusters": {
			opts: Options{ZoneMode: ZonePreferred},
			wantManager: map[string]any{
				"affinity": map[string]any{"podAntiAffinity": map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": []any{
					map[string]any{"weight": int64(100), "podAffinityTerm": zoneTerm},
					map[string]any{"weight": int64(50), "podAffinityTerm": nodeTerm},
				}}},
				"topologySpreadConstraints": []any{}, "tolerations": []any{}, "defaultTolerationSeconds": int64(60),
			},
		},
		"required is hard zone anti-affinity": {
			opts: Options{ZoneMode: ZoneRequired},
			wantManager: map[string]any{
				"affinity":                  map[string]any{"podAntiAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": []any{zoneTerm}}},
				"topologySpreadConstraints": []any{}, "tolerations": []any{}, "defaultTolerationSeconds": int64(60),
			},
		},
		"even is a zone spread with maxSkew 1 that does not schedule": {
			opts: Options{ZoneMode: ZoneEven},
			wantManager: map[string]any{
				"affinity": map[string]any{},
				"topologySpreadConstraints": []any{map[string]any{
					"maxSkew": int64(1), "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
					"labelSelector": map[string]any{"matchLabels": managerLabels()},
				}},
				"tolerations": []any{}, "defaultTolerationSeconds": int64(60),
			},
		},
		"pools become required node affinity on the pool label, with user tolerations": {
			opts: Options{ZoneMode: ZoneNone, Pools: []string{"system", "infra"}, PoolLabel: "pool", Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "infra", Effect: corev1.TaintEffectNoSchedule}}},
			wantManager: map[string]any{
				"affinity": map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
					"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "pool", "operator": "In", "values": []any{"infra", "system"}}}}},
				}}},
				"topologySpreadConstraints": []any{},
				"tolerations":               []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}},
				"defaultTolerationSeconds":  int64(60),
			},
		},
		"excluded nodes keep the daemon off them by hostname": {
			opts:        Options{ZoneMode: ZoneNone, DaemonExcludeNodes: []string{"n2", "n1"}},
			wantManager: map[string]any{"affinity": map[string]any{}, "topologySpreadConstraints": []any{}, "tolerations": []any{}, "defaultTolerationSeconds": int64(60)},
			wantDaemonAf: map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
				"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "kubernetes.io/hostname", "operator": "NotIn", "values": []any{"n1", "n2"}}}}},
			}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := tc.opts.Values()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantManager, got["manager"]); diff != "" {
				t.Errorf("manager values (-want +got):\n%s", diff)
			}
			wantDaemon := map[string]any{"affinity": map[string]any{}, "tolerations": []any{map[string]any{"operator": "Exists"}}}
			if tc.wantDaemonAf != nil {
				wantDaemon["affinity"] = tc.wantDaemonAf
			}
			if diff := cmp.Diff(wantDaemon, got["daemon"]); diff != "" {
				t.Errorf("daemon values (-want +got):\n%s", diff)
			}
		})
	}
}

func TestManagerTolerations(t *testing.T) {
	secs := int64(60)
	user := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpExists}
	want := []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs},
		user,
	}
	if diff := cmp.Diff(want, Options{Tolerations: []corev1.Toleration{user}}.ManagerTolerations()); diff != "" {
		t.Errorf("tolerations (-want +got):\n%s", diff)
	}
}

func TestParse(t *testing.T) {
	checkParse(t, "requirements", ParseNodeSelector, map[string]parseCase[[]corev1.NodeSelectorRequirement]{
		"equality becomes In": {in: "pool=system", want: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"system"}}}},
		"set and existence forms carry over": {in: "zone in (a,b),!spot", want: []corev1.NodeSelectorRequirement{
			{Key: "spot", Operator: corev1.NodeSelectorOpDoesNotExist, Values: []string{}},
			{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}},
		}},
		"a malformed selector is an error": {in: "zone in (", wantError: true},
	})
	checkParse(t, "toleration", ParseToleration, map[string]parseCase[corev1.Toleration]{
		"key=value:effect is an Equal toleration": {in: "dedicated=infra:NoSchedule", want: corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "infra", Effect: corev1.TaintEffectNoSchedule}},
		"a bare key tolerates any value":          {in: "gpu", want: corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists}},
		"star tolerates everything":               {in: "*", want: corev1.Toleration{Operator: corev1.TolerationOpExists}},
		"an unknown effect is an error":           {in: "gpu:Sometimes", wantError: true},
	})
}

// parseCase is one row of a parser's table: what the user typed, and what it parses to or
// that it is an error.
type parseCase[T any] struct {
	in        string
	want      T
	wantError bool
}

// checkParse runs parse on each row of cases; what names the result in a failure.
func checkParse[T any](t *testing.T, what string, parse func(string) (T, error), cases map[string]parseCase[T]) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parse(tc.in)
			if diff := cmp.Diff(tc.wantError, err != nil); diff != "" {
				t.Fatalf("error %v (-want +got):\n%s", err, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", what, diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		opts Options
		want int
	}{
		"one node mode is fine":                 {opts: Options{ZoneMode: ZoneEven, Pools: []string{"a"}}, want: 0},
		"two node modes are refused":            {opts: Options{Nodes: []string{"n1"}, Pools: []string{"a"}}, want: 1},
		"an unknown zone mode is refused":       {opts: Options{ZoneMode: "sometimes"}, want: 1},
		"In without values is refused":          {opts: Options{Expressions: []corev1.NodeSelectorRequirement{{Key: "a", Operator: corev1.NodeSelectorOpIn}}}, want: 1},
		"a keyless Equal toleration is refused": {opts: Options{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpEqual, Value: "x"}}}, want: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Validate(tc.opts)
			if diff := cmp.Diff(tc.want, len(got)); diff != "" {
				t.Errorf("errors %v (-want +got):\n%s", got, diff)
			}
		})
	}
}

// --nodes and the API's nodes are node names: the apiserver's Node name syntax, matched as
// values of the kubernetes.io/hostname label. Each bad name is reported by its field and value.
func TestNodesAreValidatedAsNodeNames(t *testing.T) {
	cases := map[string]struct {
		nodes []string
		want  []string
	}{
		"DNS-1123 subdomains are node names":        {nodes: []string{"node-1", "ip-10-0-0-1.ec2.internal"}},
		"capitals and underscores are refused":      {nodes: []string{"Node_A"}, want: []string{`nodes[0]: Invalid value: "Node_A"`}},
		"an empty name is refused":                  {nodes: []string{"n1", ""}, want: []string{`nodes[1]: Invalid value: ""`}},
		"a name that breaks a selector is refused":  {nodes: []string{"a,b=c"}, want: []string{`nodes[0]: Invalid value: "a,b=c"`}},
		"a name above 63 characters is refused":     {nodes: []string{strings.Repeat("a", 64)}, want: []string{`nodes[0]: Invalid value: "` + strings.Repeat("a", 64) + `"`}},
		"consecutive dots are refused":              {nodes: []string{"a..b"}, want: []string{`nodes[0]: Invalid value: "a..b"`}},
		"every bad name is reported, not the first": {nodes: []string{"A", "ok", "b_"}, want: []string{`nodes[0]: Invalid value: "A"`, `nodes[2]: Invalid value: "b_"`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range Validate(Options{Nodes: tc.nodes}) {
				got = append(got, fmt.Sprintf("%s: %s: %q", e.Field, e.Type, e.BadValue))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
