package framework_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// nodeSummary is what a test asks of a simulated node.
type nodeSummary struct {
	Zone, Hostname, Runtime, Kubelet string
	Extra                            map[string]string // labels beyond the well-known ones
	Taints                           []corev1.Taint
	Ready                            corev1.ConditionStatus
	Pods                             int64 // allocatable
	HasInternalIP, Simulated         bool
}

func summarizeNode(n *corev1.Node) nodeSummary {
	s := nodeSummary{
		Zone:      n.Labels[corev1.LabelTopologyZone],
		Hostname:  n.Labels[corev1.LabelHostname],
		Runtime:   n.Status.NodeInfo.ContainerRuntimeVersion,
		Kubelet:   n.Status.NodeInfo.KubeletVersion,
		Taints:    n.Spec.Taints,
		Pods:      n.Status.Allocatable.Pods().Value(),
		Extra:     map[string]string{},
		Simulated: n.Annotations[framework.AnnotationSimulatedNode] == "true",
	}
	for k, v := range n.Labels {
		if !strings.HasPrefix(k, "kubernetes.io/") && !strings.HasPrefix(k, "topology.kubernetes.io/") {
			s.Extra[k] = v
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			s.Ready = c.Status
		}
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && a.Address != "" {
			s.HasInternalIP = true
		}
	}
	return s
}

func TestNodesAreCreatedAsAsked(t *testing.T) {
	ns := newNamespace(t)
	cases := map[string]struct {
		node *corev1.Node
		want nodeSummary
	}{
		"a containerd node in zone a": {
			node: builder.Node(nodeName(ns, "a")).Zone("zone-a").Runtime("containerd://1.7.13").Obj(),
			want: nodeSummary{Zone: "zone-a", Runtime: "containerd://1.7.13"},
		},
		"a docker node in zone b with extra labels": {
			node: builder.Node(nodeName(ns, "b")).Zone("zone-b").Runtime("docker://24.0.7").Labels(map[string]string{"pool": "gpu", "example.com/tier": "2"}).Obj(),
			want: nodeSummary{Zone: "zone-b", Runtime: "docker://24.0.7", Extra: map[string]string{"pool": "gpu", "example.com/tier": "2"}},
		},
		"a tainted node with a small capacity keeps both": {
			node: builder.Node(nodeName(ns, "c")).Zone("zone-c").Taint("dedicated", "infra", corev1.TaintEffectNoSchedule).Capacity("2", "4Gi", 10).Obj(),
			want: nodeSummary{Zone: "zone-c", Runtime: framework.DefaultRuntime, Pods: 10,
				Taints: []corev1.Taint{{Key: "dedicated", Value: "infra", Effect: corev1.TaintEffectNoSchedule}}},
		},
		"a bare node gets what a kubelet registers": {
			node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName(ns, "bare")}},
			want: nodeSummary{Runtime: framework.DefaultRuntime},
		},
		"a node built not ready stays not ready": {
			node: builder.Node(nodeName(ns, "down")).Zone("zone-a").NotReady().Obj(),
			want: nodeSummary{Zone: "zone-a", Runtime: framework.DefaultRuntime, Ready: corev1.ConditionFalse,
				Taints: []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}}},
		},
	}
	var nodes []*corev1.Node
	for _, tc := range cases {
		nodes = append(nodes, tc.node)
	}
	sim := startSimulator(t, ns, framework.WithNodes(nodes...))
	if got := len(sim.NodeNames()); got != len(cases) {
		t.Errorf("simulator owns %d nodes, want %d", got, len(cases))
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := env.Clientset.CoreV1().Nodes().Get(context.Background(), tc.node.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get node: %v", err)
			}
			want := tc.want
			want.Hostname, want.Kubelet = tc.node.Name, "v1.37.2"
			want.HasInternalIP, want.Simulated = true, true
			if want.Extra == nil {
				want.Extra = map[string]string{}
			}
			if want.Ready == "" {
				want.Ready = corev1.ConditionTrue
			}
			if want.Pods == 0 {
				want.Pods = 110
			}
			if d := cmp.Diff(want, summarizeNode(got)); d != "" {
				t.Errorf("node (-want +got):\n%s", d)
			}
		})
	}
}

func TestSetNodeReadyFlipsTheConditionAndTheTaint(t *testing.T) {
	ns := newNamespace(t)
	name := nodeName(ns, "n")
	sim := startSimulator(t, ns, framework.WithNodes(builder.Node(name).Obj()))
	for _, ready := range []bool{false, true} {
		if err := sim.SetNodeReady(context.Background(), name, ready); err != nil {
			t.Fatalf("SetNodeReady(%v): %v", ready, err)
		}
		n, err := env.Clientset.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := corev1.ConditionFalse
		if ready {
			want = corev1.ConditionTrue
		}
		got := summarizeNode(n)
		if got.Ready != want {
			t.Errorf("after SetNodeReady(%v), Ready = %s, want %s", ready, got.Ready, want)
		}
		if tainted := len(got.Taints) == 1 && got.Taints[0].Key == corev1.TaintNodeNotReady; tainted == ready {
			t.Errorf("after SetNodeReady(%v), taints = %v", ready, got.Taints)
		}
	}
}
