package broadcastjob

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// list parses name=quantity pairs into a resource list.
func list(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

// podWith is a pod whose containers request reqs, one container each.
func podWith(reqs ...corev1.ResourceList) *corev1.Pod {
	pod := &corev1.Pod{}
	for _, r := range reqs {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{Requests: r}})
	}
	return pod
}

func TestFitsResources(t *testing.T) {
	// node is an 8-CPU, 32Gi node with room for 110 pods, plus extra allocatable.
	node := func(extra ...string) *corev1.Node {
		alloc := list(append([]string{"cpu", "8", "memory", "32Gi", "pods", "110"}, extra...)...)
		return builder.Node("node-0").Allocatable(alloc).Obj()
	}
	withInit := func(pod *corev1.Pod, reqs ...corev1.ResourceList) *corev1.Pod {
		for _, r := range reqs {
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Name: "init", Resources: corev1.ResourceRequirements{Requests: r}})
		}
		return pod
	}
	withOverhead := func(pod *corev1.Pod, o corev1.ResourceList) *corev1.Pod {
		pod.Spec.Overhead = o
		return pod
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		node *corev1.Node
		want bool
	}{
		{"a pod without requests fits a node that allows pods", podWith(nil), node(), true},
		{"a node that allows no pods fits nothing", podWith(nil), builder.Node("node-0").Allocatable(list("cpu", "8", "memory", "32Gi")).Obj(), false},
		{"requests equal to the allocatable fit", podWith(list("cpu", "8", "memory", "32Gi")), node(), true},
		{"the containers' cpu requests add up", podWith(list("cpu", "4500m"), list("cpu", "4")), node(), false},
		{"a millicore over the allocatable cpu does not fit", podWith(list("cpu", "8001m")), node(), false},
		{"memory over the allocatable does not fit", podWith(list("memory", "33Gi")), node(), false},
		{"ephemeral-storage on a node that reports none does not fit", podWith(list("ephemeral-storage", "1Gi")), node(), false},
		{"ephemeral-storage within the allocatable fits", podWith(list("ephemeral-storage", "1Gi")), node("ephemeral-storage", "100Gi"), true},
		{"an extended resource the node lacks does not fit", podWith(list("example.com/gpu", "1")), node(), false},
		{"an extended resource within the allocatable fits", podWith(list("example.com/gpu", "2")), node("example.com/gpu", "2"), true},
		{"hugepages over the allocatable do not fit", podWith(list("hugepages-2Mi", "4Mi", "memory", "1Gi")), node("hugepages-2Mi", "2Mi"), false},
		{"init containers count by the largest one, not their sum", withInit(podWith(list("cpu", "4")), list("cpu", "6"), list("cpu", "7")), node(), true},
		{"an init container larger than the node does not fit", withInit(podWith(list("cpu", "1")), list("cpu", "9")), node(), false},
		{"the pod overhead adds to the requests", withOverhead(podWith(list("cpu", "7500m")), list("cpu", "1")), node(), false},
		{"a resource the scheduler does not check is ignored", podWith(list("storage", "1Ti")), node(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testkit.Diff(t, "fitsResources", tt.want, fitsResources(tt.pod, tt.node))
		})
	}
}
