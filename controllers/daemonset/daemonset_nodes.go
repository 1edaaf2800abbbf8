package daemonset

import (
	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// Node taints every DaemonSet pod tolerates, as the built-in DaemonSet's pods do: a daemon keeps
// running on a node that is not ready, unreachable, under pressure or cordoned.
const (
	taintNotReady           = "node.kubernetes.io/not-ready"
	taintUnreachable        = "node.kubernetes.io/unreachable"
	taintDiskPressure       = "node.kubernetes.io/disk-pressure"
	taintMemoryPressure     = "node.kubernetes.io/memory-pressure"
	taintPIDPressure        = "node.kubernetes.io/pid-pressure"
	taintUnschedulable      = "node.kubernetes.io/unschedulable"
	taintNetworkUnavailable = "node.kubernetes.io/network-unavailable"
)

// placement is whether a DaemonSet's pod belongs on a node.
type placement struct {
	// shouldRun is true when a pod should be created on the node.
	shouldRun bool
	// shouldContinue is true when a pod already on the node may stay: a NoSchedule taint keeps
	// new pods off, but only a NoExecute taint the pod does not tolerate sends it away.
	shouldContinue bool
}

// nodePlacement decides whether the pod of tmpl belongs on node: the node must match the
// template's nodeName, nodeSelector and required node affinity, and the pod, with the default
// daemon tolerations, must tolerate its NoSchedule and NoExecute taints. It is pure.
func nodePlacement(node *corev1.Node, tmpl *corev1.PodTemplateSpec) placement {
	spec := tmpl.Spec.DeepCopy()
	if spec.NodeName != "" && spec.NodeName != node.Name {
		return placement{}
	}
	pod := &corev1.Pod{Spec: *spec}
	pod.Spec.Tolerations = withDaemonTolerations(pod.Spec.Tolerations, pod.Spec.HostNetwork)
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !ok {
		return placement{}
	}
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoExecute || t.Effect == corev1.TaintEffectNoSchedule
	}, true)
	if !untolerated {
		return placement{shouldRun: true, shouldContinue: true}
	}
	_, evicted := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoExecute
	}, true)
	return placement{shouldContinue: !evicted}
}

// withDaemonTolerations adds the tolerations every daemon pod has to tolerations, unless a
// toleration of the same key and effect is there already.
func withDaemonTolerations(tolerations []corev1.Toleration, hostNetwork bool) []corev1.Toleration {
	out := append([]corev1.Toleration{}, tolerations...)
	add := func(key string, effect corev1.TaintEffect) {
		for _, t := range out {
			if t.Key == key && t.Effect == effect {
				return
			}
		}
		out = append(out, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect})
	}
	add(taintNotReady, corev1.TaintEffectNoExecute)
	add(taintUnreachable, corev1.TaintEffectNoExecute)
	add(taintDiskPressure, corev1.TaintEffectNoSchedule)
	add(taintMemoryPressure, corev1.TaintEffectNoSchedule)
	add(taintPIDPressure, corev1.TaintEffectNoSchedule)
	add(taintUnschedulable, corev1.TaintEffectNoSchedule)
	if hostNetwork {
		add(taintNetworkUnavailable, corev1.TaintEffectNoSchedule)
	}
	return out
}

// olderFirst orders pods by creation time, then name.
func olderFirst(a, b *corev1.Pod) int {
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c
	}
	switch {
	case a.Name < b.Name:
		return -1
	case a.Name > b.Name:
		return 1
	}
	return 0
}
