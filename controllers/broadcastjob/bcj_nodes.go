package broadcastjob

import (
	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// fits reports whether a pod with spec may run on node, as 1.8 decides a BroadcastJob's nodes:
// the node matches spec.nodeName, the nodeSelector and the required node affinity, the pod
// tolerates the node's NoSchedule and NoExecute taints, and a cordoned node is used only by a
// pod that tolerates the unschedulable taint. Resources are left to the scheduler. It is pure.
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
	if node.Spec.Unschedulable {
		return corev1helpers.TolerationsTolerateTaint(klog.Background(), spec.Tolerations, &corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}, true)
	}
	return true
}
