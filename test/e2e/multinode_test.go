//go:build e2e && multinode

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// multiNodes is the number of nodes (and zones) the multi-node scenarios are written for:
// `make e2e-multinode` starts node-a, node-b and node-c in zone-a, zone-b and zone-c.
const multiNodes = 3

// TestMultiNode runs the scenarios whose behaviour is about several nodes and zones on the
// cluster of `make e2e-multinode`: real kubelets, each with its own containerd, one per zone.
func TestMultiNode(t *testing.T) {
	cl := loadCluster(t)
	t.Logf("cluster: registry %s, nodes %s (%s), logs in %s", cl.registry, cl.env["NODE_NAMES"], cl.nodeIP, cl.logs)
	steps := []step{
		{"install with ResourceDistributionGate on, then status reports the manager Ready and the webhook reachable", testInstallMultiNode},
		{"the nodes are real kubelets, one per zone, each on its own containerd", testNodesAndZones},
		{"WorkloadSpread puts a CloneSet's pods on the zones of its subsets, as many as each subset's percentage allows", testWorkloadSpreadZones},
		{"UnitedDeployment Adaptive: the pods of a subset that cannot schedule move to the next subset, and the subset is used again later", testUnitedDeploymentAdaptive},
		{"BroadcastJob runs one pod on every node to completion", testBroadcastJobEveryNode},
		{"PodUnavailableBudget lets one pod of a zone-spread CloneSet be evicted and refuses the second until the first is back", testBudgetAcrossZones},
		{"ResourceDistribution copies a Secret into the selected namespaces, where pods on different nodes read it, and updates the copies", testResourceDistributionOnNodes},
		{"PersistentPodState recreates each pod of an Advanced StatefulSet in the zone and on the node it had", testPersistentPodStateZones},
	}
	// The first two steps are what the others stand on; each scenario after them has a namespace
	// of its own, so one failing does not stop the rest.
	for i, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { s.run(t, cl) }) && i < 2 {
			t.Fatalf("stopping: %q failed and the scenarios need it", s.name)
		}
	}
}

// testInstallMultiNode installs as an air-gapped site's CI would, with the gates the scenarios
// need. The daemon stays off: it is host-network, and the nodes share one host and its ports.
func testInstallMultiNode(t *testing.T, cl *cluster) {
	out, err := cl.run(t, installTimeout+kubectlDeadline, "", cl.addon, "install", "--spec", "small",
		"--timeout", installTimeout.String(),
		"--set", "manager.hostNetwork=true",
		"--set", "webhookConfiguration.host="+cl.nodeIP,
		"--set", "daemon.enabled=false",
		"--set", "featureGates=ResourceDistributionGate=true",
		"--set", "imageRegistry="+cl.registry)
	require.NoError(t, err, "install")
	require.Contains(t, out, "release kruise-system/kruise-addon: deployed")
	framework.Eventually(t, podTimeout, "kruise-addon status to report the manager Ready and the webhook reachable", func(context.Context) error {
		out, err := cl.addonOut("status")
		if err != nil {
			return errors.New(err.Error() + ": " + out)
		}
		return framework.Want(strings.Contains(out, "manager 1/1") && strings.Contains(out, "webhook: reachable=true"), out)
	})
}

// nodeZones maps every node to its topology.kubernetes.io/zone label.
func (cl *cluster) nodeZones(ctx context.Context) (map[string]string, error) {
	var nodes corev1.NodeList
	if err := cl.c.List(ctx, &nodes); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, n := range nodes.Items {
		out[n.Name] = n.Labels[corev1.LabelTopologyZone]
	}
	return out, nil
}

func testNodesAndZones(t *testing.T, cl *cluster) {
	var nodes corev1.NodeList
	require.NoError(t, cl.c.List(context.Background(), &nodes))
	require.Len(t, nodes.Items, multiNodes, "make e2e-multinode starts %d nodes", multiNodes)
	zones, ports := map[string]string{}, map[int32]string{}
	for _, n := range nodes.Items {
		ready := corev1.ConditionUnknown
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ready = c.Status
			}
		}
		require.Equal(t, corev1.ConditionTrue, ready, "node %s Ready", n.Name)
		require.True(t, strings.HasPrefix(n.Status.NodeInfo.ContainerRuntimeVersion, "containerd://"), "node %s runs containerd, got %q", n.Name, n.Status.NodeInfo.ContainerRuntimeVersion)
		zone := n.Labels[corev1.LabelTopologyZone]
		require.NotEmpty(t, zone, "node %s has a zone", n.Name)
		require.Empty(t, zones[zone], "zone %s holds one node, not %s and %s", zone, zones[zone], n.Name)
		zones[zone] = n.Name
		port := n.Status.DaemonEndpoints.KubeletEndpoint.Port
		require.Empty(t, ports[port], "kubelet port %d serves one node, not %s and %s", port, ports[port], n.Name)
		ports[port] = n.Name
	}
	t.Logf("zones: %v; kubelet ports: %v", zones, ports)
}

// placedPod is a live pod with the zone of the node it runs on ("" before it is scheduled).
type placedPod struct {
	pod  corev1.Pod
	zone string
}

// placedPods are ns's live app=<app> pods with their zones.
func (cl *cluster) placedPods(ctx context.Context, ns, app string) ([]placedPod, error) {
	pods, err := framework.LivePods(ctx, cl.c, ns, app)
	if err != nil {
		return nil, err
	}
	zones, err := cl.nodeZones(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]placedPod, 0, len(pods))
	for _, p := range pods {
		out = append(out, placedPod{pod: p, zone: zones[p.Spec.NodeName]})
	}
	return out, nil
}

// readyByZone counts the ready pods per zone and says which pods are not ready yet.
func readyByZone(pods []placedPod) (map[string]int, []string) {
	got, waiting := map[string]int{}, []string(nil)
	for _, p := range pods {
		if framework.PodReady(&p.pod) {
			got[p.zone]++
		} else {
			waiting = append(waiting, p.pod.Name)
		}
	}
	return got, waiting
}

// waitReadyByZone waits until ns's app pods are all ready and spread over the zones as want.
func (cl *cluster) waitReadyByZone(t *testing.T, ns, app string, want map[string]int) []placedPod {
	t.Helper()
	var pods []placedPod
	framework.Eventually(t, rolloutTimeout, fmt.Sprintf("%s's pods ready as %v", app, want), func(ctx context.Context) error {
		var err error
		if pods, err = cl.placedPods(ctx, ns, app); err != nil {
			return err
		}
		got, waiting := readyByZone(pods)
		return framework.Want(len(waiting) == 0 && maps.Equal(got, want), fmt.Sprintf("ready %v, not ready %v", got, waiting))
	})
	return pods
}

func (cl *cluster) sampleImage() string { return cl.registry + "/e2e/sample:v1" }

// spreadOverZones makes the scheduler put one pod per zone (maxSkew 1, never skewed).
func spreadOverZones(spec *corev1.PodSpec, app string) {
	spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
	}}
}

func quickStop(spec *corev1.PodSpec) {
	grace := int64(1)
	spec.TerminationGracePeriodSeconds = &grace
}

func nsName(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

// matchedSubset is the WorkloadSpread subset the webhook wrote on the pod.
func matchedSubset(p *corev1.Pod) (string, error) {
	var v struct {
		Name   string `json:"name"`
		Subset string `json:"subset"`
	}
	raw, ok := p.Annotations[appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations]
	if !ok {
		return "", fmt.Errorf("pod %s has no %s annotation", p.Name, appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations)
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return "", fmt.Errorf("pod %s annotation %q: %w", p.Name, raw, err)
	}
	return v.Subset, nil
}
