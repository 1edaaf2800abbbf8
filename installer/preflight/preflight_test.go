package preflight

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-addon/kruise-addon/installer/facts"
	"github.com/kruise-addon/kruise-addon/installer/placement"
	"github.com/kruise-addon/kruise-addon/installer/spec"
	"github.com/kruise-addon/kruise-addon/versions"
)

// node builds the facts of a ready, schedulable containerd node.
func node(name, zone string, mods ...func(*facts.Node)) facts.Node {
	n := facts.Node{Name: name, Zone: zone, Labels: map[string]string{corev1.LabelHostname: name}, Ready: true, Schedulable: true, ContainerRuntimeVersion: "containerd://1.7.13"}
	if zone != "" {
		n.Labels[corev1.LabelTopologyZone] = zone
	}
	for _, m := range mods {
		m(&n)
	}
	return n
}

func docker(n *facts.Node)   { n.ContainerRuntimeVersion = "docker://24.0.7" }
func cordoned(n *facts.Node) { n.Schedulable = false }
func label(k, v string) func(*facts.Node) {
	return func(n *facts.Node) { n.Labels[k] = v }
}
func taint(key string) func(*facts.Node) {
	return func(n *facts.Node) {
		n.Taints = append(n.Taints, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
	}
}

func input(t *testing.T, f facts.Facts, mods ...func(*Input)) Input {
	t.Helper()
	table, err := versions.Load()
	if err != nil {
		t.Fatal(err)
	}
	small, _ := spec.For(spec.Small, spec.Overrides{})
	in := Input{Facts: f, Table: table, AddonVersion: table.CurrentRow().Addon, ReleaseName: "kruise-addon", Namespace: "kruise-system", Spec: small, PodFailurePolicy: "Ignore"}
	if in.Facts.ServerVersion == "" {
		in.Facts.ServerVersion = "v1.37.2"
	}
	for _, m := range mods {
		m(&in)
	}
	return in
}

func withSpec(p spec.Preset, replicas int32) func(*Input) {
	return func(in *Input) {
		o := spec.Overrides{}
		if p == spec.Custom {
			o.Replicas = replicas
		}
		in.Spec, _ = spec.For(p, o)
	}
}

func withPlacement(o placement.Options) func(*Input) { return func(in *Input) { in.Placement = o } }

// severities keeps the worst verdict of each check.
func severities(r Report) map[string]Severity {
	rank := map[Severity]int{OK: 1, Warning: 2, Refused: 3}
	out := map[string]Severity{}
	for _, v := range r.Verdicts {
		if rank[v.Severity] > rank[out[v.Check]] {
			out[v.Check] = v.Severity
		}
	}
	return out
}

func threeZones() []facts.Node {
	return []facts.Node{node("a1", "a"), node("b1", "b"), node("c1", "c")}
}

func TestRun(t *testing.T) {
	cases := map[string]struct {
		in          func(t *testing.T) Input
		want        map[string]Severity
		wantExclude []string
		wantAdopt   bool
	}{
		"a supported cluster on containerd with small passes, warned about the single replica": {
			in:   func(t *testing.T) Input { return input(t, facts.Facts{Nodes: threeZones()}) },
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning},
		},
		"a v1.24.3 cluster is refused": {
			in:   func(t *testing.T) Input { return input(t, facts.Facts{ServerVersion: "v1.24.3", Nodes: threeZones()}) },
			want: map[string]Severity{CheckClusterVersion: Refused, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning},
		},
		"a cloud version string is parsed and supported": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{ServerVersion: "v1.30.4-eks-a1b2c3", Nodes: threeZones()})
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning},
		},
		"docker nodes with add-on 1.0.40 on v1.30 are refused": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{ServerVersion: "v1.30.4", Nodes: []facts.Node{node("a1", "a", docker), node("b1", "b")}}, func(in *Input) { in.AddonVersion = "1.0.40" })
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: Refused, CheckPlacement: OK, CheckWebhookRisk: Warning},
		},
		"docker nodes with add-on 1.0.40 are kept free of the daemon when asked": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{ServerVersion: "v1.30.4", Nodes: []facts.Node{node("a1", "a", docker), node("b1", "b")}}, func(in *Input) { in.AddonVersion = "1.0.40"; in.ExcludeUnsupportedNodes = true })
			},
			want:        map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: Warning, CheckPlacement: OK, CheckWebhookRisk: Warning},
			wantExclude: []string{"a1"},
		},
		"docker nodes with the current add-on are allowed": {
			in:   func(t *testing.T) Input { return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a", docker)}}) },
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning},
		},
		"a community Helm release is a foreign installation": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: threeZones(), Releases: []facts.Release{{Name: "kruise", Namespace: "default", Status: "deployed", ChartVersion: "1.8.0"}}})
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: Refused, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning},
		},
		"a manager Deployment nobody owns is a foreign installation": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: threeZones(), Managers: []facts.Object{{Name: "kruise-controller-manager", Namespace: "kruise-system"}}})
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: Refused, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning},
		},
		"CRDs without any owner and no manager are adopted": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: threeZones(), CRDs: []facts.Object{{Name: "clonesets.apps.kruise.io"}}})
			},
			want:      map[string]Severity{CheckClusterVersion: OK, CheckForeign: Warning, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning},
			wantAdopt: true,
		},
		"CRDs kept after their release was uninstalled are adopted": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: threeZones(), CRDs: []facts.Object{{Name: "clonesets.apps.kruise.io", Owner: facts.Owner{Release: "kruise-addon", Namespace: "elsewhere"}}}})
			},
			want:      map[string]Severity{CheckClusterVersion: OK, CheckForeign: Warning, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning},
			wantAdopt: true,
		},
		"CRDs owned by another live release are foreign": {
			in: func(t *testing.T) Input {
				other := facts.Owner{Release: "kruise", Namespace: "default"}
				return input(t, facts.Facts{Nodes: threeZones(), Releases: []facts.Release{{Name: "kruise", Namespace: "default"}}, CRDs: []facts.Object{{Name: "clonesets.apps.kruise.io", Owner: other}}})
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: Refused, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning},
		},
		"our own release and CRDs are not foreign": {
			in: func(t *testing.T) Input {
				own := facts.Owner{Release: "kruise-addon", Namespace: "kruise-system"}
				return input(t, facts.Facts{Nodes: threeZones(), Releases: []facts.Release{{Name: "kruise-addon", Namespace: "kruise-system"}}, CRDs: []facts.Object{{Name: "clonesets.apps.kruise.io", Owner: own}}, Managers: []facts.Object{{Name: "kruise-controller-manager", Namespace: "kruise-system", Owner: own}}})
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning},
		},
		"required with 3 replicas on 2 zones is refused": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a"), node("a2", "a"), node("b1", "b")}}, withSpec(spec.Large, 0), withPlacement(placement.Options{ZoneMode: placement.ZoneRequired}))
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: Refused, CheckWebhookRisk: OK},
		},
		"required with 3 replicas on 3 zones passes": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: threeZones()}, withSpec(spec.Large, 0), withPlacement(placement.Options{ZoneMode: placement.ZoneRequired}))
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: OK},
		},
		"a zone whose only node is cordoned does not count": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a"), node("b1", "b"), node("c1", "c", cordoned)}}, withSpec(spec.Large, 0), withPlacement(placement.Options{ZoneMode: placement.ZoneRequired}))
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: Refused, CheckWebhookRisk: OK},
		},
		"a pool no node carries is refused": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: threeZones()}, withPlacement(placement.Options{Pools: []string{"system"}}))
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: Refused, CheckWebhookRisk: Warning},
		},
		"a pool some node carries passes": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a", label(placement.DefaultPoolLabel, "system")), node("b1", "b")}}, withPlacement(placement.Options{Pools: []string{"system"}}))
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning},
		},
		"matching nodes whose taints are not tolerated are refused": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a", taint("dedicated"))}})
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: Refused, CheckWebhookRisk: Warning},
		},
		"a user toleration makes a tainted node eligible": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a", taint("dedicated"))}}, withPlacement(placement.Options{Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}}))
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning},
		},
		"even mode without zone labels is refused": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("n1", ""), node("n2", "")}}, withSpec(spec.Large, 0), withPlacement(placement.Options{ZoneMode: placement.ZoneEven}))
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: Refused, CheckWebhookRisk: OK},
		},
		"a cluster without nodes is refused": {
			in:   func(t *testing.T) Input { return input(t, facts.Facts{}) },
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: Refused, CheckWebhookRisk: Warning},
		},
		"a cluster without nodes is only a warning when not waiting": {
			in:   func(t *testing.T) Input { return input(t, facts.Facts{}, func(in *Input) { in.NoWait = true }) },
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: Warning, CheckWebhookRisk: Warning},
		},
		"pod webhooks failing closed are a risk even with HA": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: threeZones()}, withSpec(spec.Large, 0), func(in *Input) { in.PodFailurePolicy = "Fail" })
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Run(tc.in(t))
			if diff := cmp.Diff(tc.want, severities(got)); diff != "" {
				t.Errorf("severities (-want +got):\n%s\nverdicts: %+v", diff, got.Verdicts)
			}
			if diff := cmp.Diff(tc.wantExclude, got.DaemonExcludeNodes); diff != "" {
				t.Errorf("daemon exclusions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAdopt, got.AdoptCRDs); diff != "" {
				t.Errorf("adopt CRDs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMessages(t *testing.T) {
	cases := map[string]struct {
		in          func(t *testing.T) Input
		check       string
		wantMessage string
	}{
		"a too-old cluster names the supported range": {
			in:          func(t *testing.T) Input { return input(t, facts.Facts{ServerVersion: "v1.24.3", Nodes: threeZones()}) },
			check:       CheckClusterVersion,
			wantMessage: "add-on 1.2.0 supports clusters v1.29–v1.37; cluster v1.24 is older than the oldest it supports; no add-on version supports v1.24 (the table covers v1.23, v1.25, v1.27–v1.37)",
		},
		"required on too few zones says how many fit": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a"), node("b1", "b")}}, withSpec(spec.Large, 0), withPlacement(placement.Options{ZoneMode: placement.ZoneRequired}))
			},
			check:       CheckPlacement,
			wantMessage: "zone mode required puts at most one of 3 replicas per zone, but only 2 zone(s) have nodes that can run the manager (a, b)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got string
			for _, v := range Run(tc.in(t)).Verdicts {
				if v.Check == tc.check {
					got = v.Message
				}
			}
			if diff := cmp.Diff(tc.wantMessage, got); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunScales keeps the node loop linear: 5000 nodes in 50 zones give the same verdicts as 3.
func TestRunScales(t *testing.T) {
	var nodes []facts.Node
	for i := range 5000 {
		nodes = append(nodes, node(fmt.Sprintf("n%d", i), fmt.Sprintf("z%d", i%50)))
	}
	got := Run(input(t, facts.Facts{Nodes: nodes}, withSpec(spec.Large, 0), withPlacement(placement.Options{ZoneMode: placement.ZoneRequired})))
	want := map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: OK}
	if diff := cmp.Diff(want, severities(got)); diff != "" {
		t.Errorf("severities (-want +got):\n%s", diff)
	}
}
