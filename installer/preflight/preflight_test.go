package preflight

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

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

// room gives n allocatable cpu and memory, with used of each requested by the pods on it.
func room(cpu, memory, usedCPU, usedMemory string) func(*facts.Node) {
	return func(n *facts.Node) {
		n.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
		n.Requested = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(usedCPU), corev1.ResourceMemory: resource.MustParse(usedMemory)}
	}
}

// ownManager says how much of a node's requests the manager pods of namespace hold.
func ownManager(namespace, cpu, memory string) func(*facts.Node) {
	return func(n *facts.Node) {
		n.ManagerRequested = map[string]corev1.ResourceList{namespace: {corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}}
	}
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
	in := Input{Facts: f, Table: table, AddonVersion: table.CurrentRow().Addon, ReleaseName: "kruise-addon", Namespace: "kruise-system", Spec: small, PodFailurePolicy: "Ignore", Wait: true, ConfigNamespace: "kruise-daemon-config"}
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
		wantAdopt   []string
	}{
		"a supported cluster on containerd with small passes, warned about the single replica": {
			in:   func(t *testing.T) Input { return input(t, facts.Facts{Nodes: threeZones()}) },
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"a v1.24.3 cluster is refused": {
			in:   func(t *testing.T) Input { return input(t, facts.Facts{ServerVersion: "v1.24.3", Nodes: threeZones()}) },
			want: map[string]Severity{CheckClusterVersion: Refused, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"a cloud version string is parsed and supported": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{ServerVersion: "v1.30.4-eks-a1b2c3", Nodes: threeZones()})
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"docker nodes with add-on 1.0.40 on v1.30 are refused": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{ServerVersion: "v1.30.4", Nodes: []facts.Node{node("a1", "a", docker), node("b1", "b")}}, func(in *Input) { in.AddonVersion = "1.0.40" })
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: Refused, CheckPlacement: OK, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"docker nodes with add-on 1.0.40 are kept free of the daemon when asked": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{ServerVersion: "v1.30.4", Nodes: []facts.Node{node("a1", "a", docker), node("b1", "b")}}, func(in *Input) { in.AddonVersion = "1.0.40"; in.ExcludeUnsupportedNodes = true })
			},
			want:        map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: Warning, CheckPlacement: OK, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
			wantExclude: []string{"a1"},
		},
		"docker nodes with the current add-on are allowed": {
			in:   func(t *testing.T) Input { return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a", docker)}}) },
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"a community Helm release is a foreign installation": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: threeZones(), Releases: []facts.Release{{Name: "kruise", Namespace: "default", Status: "deployed", ChartVersion: "1.8.0"}}})
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: Refused, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"a manager Deployment nobody owns is a foreign installation": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: threeZones(), Managers: []facts.Object{{Name: "kruise-controller-manager", Namespace: "kruise-system"}}})
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: Refused, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"CRDs without any owner and no manager are adopted": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: threeZones(), CRDs: []facts.Object{{Name: "clonesets.apps.kruise.io"}}})
			},
			want:      map[string]Severity{CheckClusterVersion: OK, CheckForeign: Warning, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
			wantAdopt: []string{"clonesets.apps.kruise.io"},
		},
		"CRDs kept after their release was uninstalled are adopted": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: threeZones(), CRDs: []facts.Object{{Name: "clonesets.apps.kruise.io", Owner: facts.Owner{Release: "kruise-addon", Namespace: "elsewhere"}}}})
			},
			want:      map[string]Severity{CheckClusterVersion: OK, CheckForeign: Warning, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
			wantAdopt: []string{"clonesets.apps.kruise.io"},
		},
		"CRDs owned by another live release are foreign": {
			in: func(t *testing.T) Input {
				other := facts.Owner{Release: "kruise", Namespace: "default"}
				return input(t, facts.Facts{Nodes: threeZones(), Releases: []facts.Release{{Name: "kruise", Namespace: "default"}}, CRDs: []facts.Object{{Name: "clonesets.apps.kruise.io", Owner: other}}})
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: Refused, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"our own release and CRDs are not foreign": {
			in: func(t *testing.T) Input {
				own := facts.Owner{Release: "kruise-addon", Namespace: "kruise-system"}
				return input(t, facts.Facts{Nodes: threeZones(), Releases: []facts.Release{{Name: "kruise-addon", Namespace: "kruise-system"}}, CRDs: []facts.Object{{Name: "clonesets.apps.kruise.io", Owner: own}}, Managers: []facts.Object{{Name: "kruise-controller-manager", Namespace: "kruise-system", Owner: own}}})
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"required with 3 replicas on 2 zones is refused": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a"), node("a2", "a"), node("b1", "b")}}, withSpec(spec.Large, 0), withPlacement(placement.Options{ZoneMode: placement.ZoneRequired}))
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: Refused, CheckWebhookRisk: OK, CheckConfigNamespace: OK},
		},
		"required with 3 replicas on 3 zones passes": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: threeZones()}, withSpec(spec.Large, 0), withPlacement(placement.Options{ZoneMode: placement.ZoneRequired}))
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: OK, CheckConfigNamespace: OK},
		},
		"a zone whose only node is cordoned does not count": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a"), node("b1", "b"), node("c1", "c", cordoned)}}, withSpec(spec.Large, 0), withPlacement(placement.Options{ZoneMode: placement.ZoneRequired}))
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: Refused, CheckWebhookRisk: OK, CheckConfigNamespace: OK},
		},
		"a pool no node carries is refused": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: threeZones()}, withPlacement(placement.Options{Pools: []string{"system"}}))
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: Refused, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"a pool some node carries passes": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a", label(placement.DefaultPoolLabel, "system")), node("b1", "b")}}, withPlacement(placement.Options{Pools: []string{"system"}}))
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"matching nodes whose taints are not tolerated are refused": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a", taint("dedicated"))}})
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: Refused, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"a user toleration makes a tainted node eligible": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a", taint("dedicated"))}}, withPlacement(placement.Options{Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}}))
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"even mode without zone labels is refused": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("n1", ""), node("n2", "")}}, withSpec(spec.Large, 0), withPlacement(placement.Options{ZoneMode: placement.ZoneEven}))
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: Refused, CheckWebhookRisk: OK, CheckConfigNamespace: OK},
		},
		"a cluster without nodes is refused": {
			in:   func(t *testing.T) Input { return input(t, facts.Facts{}) },
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: Refused, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"a cluster without nodes is only a warning when not waiting": {
			in:   func(t *testing.T) Input { return input(t, facts.Facts{}, func(in *Input) { in.Wait = false }) },
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: Warning, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"nodes that match but have no room for the manager's requests are refused": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a", room("4", "8Gi", "3950m", "1Gi")), node("b1", "b", room("4", "8Gi", "1", "7950Mi"))}})
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: Refused, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"one node with room is enough for the small spec": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a", room("4", "8Gi", "3950m", "1Gi")), node("b1", "b", room("4", "8Gi", "1", "1Gi"))}})
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"three replicas need room for three": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a", room("4", "8Gi", "3", "1Gi")), node("b1", "b", room("4", "8Gi", "3600m", "1Gi")), node("c1", "c", room("4", "8Gi", "3600m", "1Gi"))}}, withSpec(spec.Large, 0))
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: Refused, CheckWebhookRisk: OK, CheckConfigNamespace: OK},
		},
		"the requests of the manager an upgrade replaces do not count against the room": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a", room("1", "2Gi", "1", "1Gi"), ownManager("kruise-system", "100m", "256Mi"))}})
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"no room is only a warning when not waiting": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a", room("1", "2Gi", "1", "1Gi"))}}, func(in *Input) { in.Wait = false })
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: Warning, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
		},
		"pod webhooks failing closed are a risk even with HA": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: threeZones()}, withSpec(spec.Large, 0), func(in *Input) { in.PodFailurePolicy = "Fail" })
			},
			want: map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: Warning, CheckConfigNamespace: OK},
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
			if diff := cmp.Diff(tc.wantAdopt, got.CRDsToAdopt); diff != "" {
				t.Errorf("CRDs to adopt (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(len(tc.wantAdopt) > 0, got.AdoptCRDs); diff != "" {
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
		"no room names the request and the roomiest node's room": {
			in: func(t *testing.T) Input {
				return input(t, facts.Facts{Nodes: []facts.Node{node("a1", "a", room("4", "8Gi", "3950m", "1Gi")), node("b1", "b", room("4", "8Gi", "3", "7950Mi"))}})
			},
			check: CheckPlacement,
			wantMessage: "the manager requests cpu 100m, memory 256Mi per replica, and the 2 eligible node(s) have room for 0 of its 1 replica(s): " +
				"the roomiest, b1, has cpu 1, memory 242Mi free (allocatable minus the requests of the pods on it)",
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
	want := map[string]Severity{CheckClusterVersion: OK, CheckForeign: OK, CheckRuntime: OK, CheckPlacement: OK, CheckWebhookRisk: OK, CheckConfigNamespace: OK}
	if diff := cmp.Diff(want, severities(got)); diff != "" {
		t.Errorf("severities (-want +got):\n%s", diff)
	}
}

func TestConfigNamespace(t *testing.T) {
	own := facts.Owner{Release: "kruise-addon", Namespace: "kruise-system"}
	cases := map[string]struct {
		name         string
		namespaces   []facts.Object
		wantSeverity Severity
		wantContains []string
	}{
		"a namespace that does not exist yet is created by the release": {
			name: "kruise-daemon-config", wantSeverity: OK,
		},
		"a namespace this release created is ours on upgrade": {
			name: "kruise-daemon-config", namespaces: []facts.Object{{Name: "kruise-daemon-config", Owner: own}}, wantSeverity: OK,
		},
		"the install namespace is refused: the daemon could read the webhook's CA key there": {
			name: "kruise-system", namespaces: []facts.Object{{Name: "kruise-system"}}, wantSeverity: Refused,
			wantContains: []string{`daemon.configNamespace "kruise-system" is the install namespace`, "CA key", "does not exist yet"},
		},
		"an existing namespace without a Helm owner is refused, naming the value and the fix": {
			name: "victim", namespaces: []facts.Object{{Name: "victim"}}, wantSeverity: Refused,
			wantContains: []string{`daemon.configNamespace "victim"`, "belongs to no Helm release", "delete it, with everything in it, on uninstall", "does not exist yet"},
		},
		"an existing namespace of another release is refused": {
			name: "shared", namespaces: []facts.Object{{Name: "shared", Owner: facts.Owner{Release: "other", Namespace: "apps"}}}, wantSeverity: Refused,
			wantContains: []string{"belongs to release apps/other"},
		},
		"a namespace of a release of the same name in another namespace is refused": {
			name: "shared", namespaces: []facts.Object{{Name: "shared", Owner: facts.Owner{Release: "kruise-addon", Namespace: "elsewhere"}}}, wantSeverity: Refused,
			wantContains: []string{"belongs to release elsewhere/kruise-addon"},
		},
		"kube-system is refused even though it always exists": {
			name: "kube-system", namespaces: []facts.Object{{Name: "kube-system"}}, wantSeverity: Refused,
			wantContains: []string{`daemon.configNamespace "kube-system" is a system namespace`},
		},
		"default is refused even when nobody looked it up": {
			name: "default", wantSeverity: Refused, wantContains: []string{"system namespace"},
		},
		"a namespace of this release still terminating is refused until it is gone": {
			name: "kruise-daemon-config", namespaces: []facts.Object{{Name: "kruise-daemon-config", Owner: own, Terminating: true}}, wantSeverity: Refused,
			wantContains: []string{"kruise-daemon-config is still being deleted", "kubectl wait --for=delete namespace/kruise-daemon-config"},
		},
		"kube-public is refused":     {name: "kube-public", wantSeverity: Refused},
		"kube-node-lease is refused": {name: "kube-node-lease", wantSeverity: Refused},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := input(t, facts.Facts{Nodes: threeZones(), Namespaces: tc.namespaces}, func(in *Input) { in.ConfigNamespace = tc.name })
			got := ConfigNamespace(in)
			if diff := cmp.Diff(tc.wantSeverity, got.Severity); diff != "" {
				t.Errorf("severity of %q (-want +got):\n%s", got.Message, diff)
			}
			var missing []string
			for _, w := range tc.wantContains {
				if !strings.Contains(got.Message+" fix: "+got.Fix, w) {
					missing = append(missing, w)
				}
			}
			if diff := cmp.Diff([]string(nil), missing); diff != "" {
				t.Errorf("missing from %q, fix %q (-want +got):\n%s", got.Message, got.Fix, diff)
			}
			if diff := cmp.Diff(tc.wantSeverity == Refused, Run(in).Refused()); diff != "" {
				t.Errorf("Run refused (-want +got):\n%s", diff)
			}
		})
	}
}
