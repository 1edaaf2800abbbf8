package broadcastjob

import (
	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// nodeNameField is the node field a pod's required node affinity names its node by.
const nodeNameField = "metadata.name"

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

// pinToNode makes the scheduler place the pod on node only: its required node affinity becomes
// the one term that names the node. The template's own placement rules were checked already.
func pinToNode(spec *corev1.PodSpec, node string) {
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: nodeNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}},
	}
}

// targetNode is the node a pod runs on or, before it is bound, the node its required node
// affinity names; "" when neither says.
func targetNode(pod *corev1.Pod) string {
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == nodeNameField && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}
