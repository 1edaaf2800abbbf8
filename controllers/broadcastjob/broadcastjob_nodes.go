package broadcastjob

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// fits reports whether a pod with spec may run on node, as 1.8 decides a BroadcastJob's nodes:
// the node matches spec.nodeName, the nodeSelector and the required node affinity, the pod
// tolerates the node's NoSchedule and NoExecute taints, a cordoned node is used only by a pod
// that tolerates the unschedulable taint, and the node's allocatable holds the pod's requests
// (see fitsResources). It is pure.
func fits(spec *corev1.PodSpec, node *corev1.Node) bool {
	if spec.NodeName != "" && spec.NodeName != node.Name {
		return false
	}
	pod := &corev1.Pod{Spec: *spec}
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !ok {
		return false
	}
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoExecute || t.Effect == corev1.TaintEffectNoSchedule
	}, true)
	if untolerated {
		return false
	}
	if node.Spec.Unschedulable && !corev1helpers.TolerationsTolerateTaint(klog.Background(), spec.Tolerations, &corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}, true) {
		return false
	}
	return fitsResources(pod, node)
}

// fitsResources reports whether node's allocatable holds pod, as the scheduler's resource fit
// does in 1.8's check: the pod's requests (containers, the largest init container, pod-level
// requests and overhead) are compared with the allocatable cpu, memory, ephemeral-storage and
// scalar resources (extended resources, hugepages), and the node must allow at least one pod.
// Like 1.8, it measures against the whole allocatable, not what the node's other pods leave:
// a node that is only busy still gets the job's pod, which waits for room there, and a pod
// that already ran is never judged against pods that came after it.
func fitsResources(pod *corev1.Pod, node *corev1.Node) bool {
	alloc := node.Status.Allocatable
	if alloc.Pods().Value() < 1 {
		return false
	}
	for name, want := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
		if want.Sign() <= 0 || !checkedResource(name) {
			continue
		}
		if exceeds(name, want, alloc[name]) {
			return false
		}
	}
	return true
}

// checkedResource: the scheduler's fit looks at cpu, memory, ephemeral-storage and the scalar
// resources (names with a domain, hugepages-* and attachable-volumes-*); it ignores the rest.
func checkedResource(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return true
	}
	s := string(name)
	return strings.Contains(s, "/") || strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) || strings.HasPrefix(s, "attachable-volumes-")
}

// exceeds compares in the scheduler's units: millicores for cpu, whole units (rounded up) for
// the rest.
func exceeds(name corev1.ResourceName, want, have resource.Quantity) bool {
	if name == corev1.ResourceCPU {
		return want.MilliValue() > have.MilliValue()
	}
	return want.Value() > have.Value()
}
