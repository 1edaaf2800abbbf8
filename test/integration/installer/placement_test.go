package installer

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/cli"
	"github.com/kruise-addon/kruise-addon/installer/placement"
	"github.com/kruise-addon/kruise-addon/installer/spec"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// zoneTerm is the anti-affinity term every zone mode builds on.
func zoneTerm() corev1.PodAffinityTerm {
	return corev1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"control-plane": "controller-manager"}}, TopologyKey: corev1.LabelTopologyZone}
}

// preferredAnti is the preferred mode's anti-affinity: zones first, then nodes.
func preferredAnti() *corev1.PodAntiAffinity {
	node := zoneTerm()
	node.TopologyKey = corev1.LabelHostname
	return &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{
		{Weight: 100, PodAffinityTerm: zoneTerm()}, {Weight: 50, PodAffinityTerm: node},
	}}
}

// TestPreferredModeOnOneZoneSpreadsOverNodes confines the large spec's three replicas to the
// two nodes of one zone: preferred mode falls back to putting them on different nodes there.
func TestPreferredModeOnOneZoneSpreadsOverNodes(t *testing.T) {
	ctx, i, ns := releaseTest(t, "kruise-one-zone")
	res, err := i.Install(ctx, installer.Options{
		Namespace: ns, Spec: &installer.SpecChoice{Preset: spec.Large},
		Placement: &placement.Options{ZoneMode: placement.ZonePreferred, Nodes: []string{"a1", "a2"}}, Set: testSet(), Timeout: installTimeout,
	})
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	var warning string
	for _, v := range res.Preflight.Verdicts {
		if v.Check == "placement" {
			warning = v.Message
		}
	}
	if missing := testkit.Missing(warning, "every eligible node is in zone zone-a", "spread over different nodes of that zone"); missing != nil {
		t.Errorf("placement verdict %q lacks %q", warning, missing)
	}
	d := managerDeployment(t, ns)
	if diff := cmp.Diff(preferredAnti(), d.Spec.Template.Spec.Affinity.PodAntiAffinity); diff != "" {
		t.Errorf("pod anti-affinity (-want +got):\n%s", diff)
	}
	pods, err := env.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "control-plane=controller-manager"})
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Spec.NodeName != "" {
			nodes[p.Spec.NodeName]++
		}
	}
	if len(nodes) != 2 {
		t.Errorf("replicas per node %v: want both nodes of the zone used", nodes)
	}
}

// TestLargeZoneModes installs the large spec on nodes in three zones once per zone mode, the
// required mode through the cobra command, and checks both the rendered placement and where
// the scheduler put the replicas.
func TestLargeZoneModes(t *testing.T) {
	ctx := context.Background()
	cases := map[string]struct {
		mode       placement.ZoneMode
		viaCLI     bool
		wantAnti   *corev1.PodAntiAffinity
		wantSpread []corev1.TopologySpreadConstraint
		// wantZones checks the replicas' zones (sorted).
		wantZones func(zones []string) bool
	}{
		"preferred is soft zone anti-affinity and every replica is scheduled": {
			mode:      placement.ZonePreferred,
			wantAnti:  preferredAnti(),
			wantZones: func(z []string) bool { return len(z) == 3 },
		},
		"even is a zone spread with maxSkew 1 and puts one replica in each zone": {
			mode: placement.ZoneEven,
			wantSpread: []corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"control-plane": "controller-manager"}},
			}},
			wantZones: func(z []string) bool { return slices.Equal(z, []string{zoneA, zoneB, zoneC}) },
		},
		"required is hard zone anti-affinity, one replica per zone, installed through the CLI": {
			mode:      placement.ZoneRequired,
			viaCLI:    true,
			wantAnti:  &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{zoneTerm()}},
			wantZones: func(z []string) bool { return slices.Equal(z, []string{zoneA, zoneB, zoneC}) },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			const ns = "kruise-large"
			i, _ := newInstaller(t)
			if tc.viaCLI {
				args := []string{"install", "--kubeconfig", env.Kubeconfig, "-n", ns, "--spec", "large", "--zone-mode", string(tc.mode), "--timeout", installTimeout.String(), "-o", "json"}
				for _, s := range testSet() {
					args = append(args, "--set", s)
				}
				var out, errOut bytes.Buffer
				code := cli.Run(ctx, args, &out, &errOut)
				if code != cli.ExitOK {
					t.Fatalf("exit %d; stdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
				}
				var res installer.Result
				if err := json.Unmarshal(out.Bytes(), &res); err != nil {
					t.Fatalf("output is not a JSON result: %v\n%s", err, out.String())
				}
				if diff := cmp.Diff("deployed", res.Status); diff != "" {
					t.Errorf("status in the JSON output (-want +got):\n%s", diff)
				}
			} else {
				_, err := i.Install(ctx, installer.Options{
					Namespace: ns, Spec: &installer.SpecChoice{Preset: spec.Large},
					Placement: &placement.Options{ZoneMode: tc.mode}, Set: testSet(), Timeout: installTimeout,
				})
				if err != nil {
					t.Fatalf("install: %v", err)
				}
			}
			t.Cleanup(func() { uninstall(t, i, ns) })

			d := managerDeployment(t, ns)
			podSpec := d.Spec.Template.Spec
			var gotAnti *corev1.PodAntiAffinity
			if podSpec.Affinity != nil {
				gotAnti = podSpec.Affinity.PodAntiAffinity
			}
			if diff := cmp.Diff(tc.wantAnti, gotAnti); diff != "" {
				t.Errorf("pod anti-affinity (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSpread, podSpec.TopologySpreadConstraints); diff != "" {
				t.Errorf("topology spread (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(int32(3), d.Status.ReadyReplicas); diff != "" {
				t.Errorf("ready replicas (-want +got):\n%s", diff)
			}
			zones := managerPodZones(t, ns)
			slices.Sort(zones)
			if !tc.wantZones(zones) {
				t.Errorf("replicas landed in zones %v", zones)
			}
			pdb, err := env.Clientset.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(1, len(pdb.Items)); diff != "" {
				t.Errorf("large has a disruption budget (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRequiredModeOnTwoZonesIsRefused restricts the manager to two zones with a node selector;
// three replicas cannot each have their own zone, so the CLI refuses before applying anything.
func TestRequiredModeOnTwoZonesIsRefused(t *testing.T) {
	const ns = "kruise-refused"
	var out, errOut bytes.Buffer
	args := []string{"install", "--kubeconfig", env.Kubeconfig, "-n", ns, "--spec", "large", "--zone-mode", "required",
		"--node-selector", corev1.LabelTopologyZone + " in (" + zoneA + "," + zoneB + ")", "-o", "json"}
	code := cli.Run(context.Background(), args, &out, &errOut)
	if diff := cmp.Diff(cli.ExitRefused, code); diff != "" {
		t.Fatalf("exit code (-want +got):\n%s\nstdout:\n%s\nstderr:\n%s", diff, out.String(), errOut.String())
	}
	var payload struct {
		Refused installer.RefusedError `json:"refused"`
	}
	if err := json.Unmarshal(out.Bytes(), &payload); err != nil || payload.Refused.Preflight == nil {
		t.Fatalf("no refusal in the JSON output (%v):\n%s", err, out.String())
	}
	var placementMsg string
	for _, v := range payload.Refused.Preflight.Refusals() {
		if v.Check == "placement" {
			placementMsg = v.Message
		}
	}
	want := "zone mode required puts at most one of 3 replicas per zone, but only 2 zone(s) have nodes that can run the manager (zone-a, zone-b)"
	if diff := cmp.Diff(want, placementMsg); diff != "" {
		t.Errorf("placement refusal (-want +got):\n%s", diff)
	}
	if namespaceExists(t, ns) {
		t.Errorf("namespace %s was created by a refused install", ns)
	}
	if _, err := helmConfig(t, ns).Releases.Last(installer.DefaultReleaseName); err == nil {
		t.Errorf("a refused install stored a release")
	}
}
