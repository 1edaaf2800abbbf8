package spread

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// Favorite returns the index of the subset a pod that predates the WorkloadSpread belongs to,
// judged by the node it runs on, or -1 when it fits none. A subset fits when the node
// tolerated by the pod's and the subset's tolerations matches the subset's
// requiredNodeSelectorTerm (joined to the pod's own required terms). Among the fitting
// subsets the highest score wins, the first one on a tie; the score ranks, in this order, the
// subset's preferredNodeSelectorTerms weight on the node, whether the pod already looks as the
// subset's patch would make it, and whether the subset still has room (missing[i] > 0).
func Favorite(pod *corev1.Pod, node *corev1.Node, subsets []appsv1alpha1.WorkloadSpreadSubset, missing []int32) int {
	best, bestScore := -1, int64(-1)
	for i := range subsets {
		s := &subsets[i]
		if !fits(pod, node, s) {
			continue
		}
		var score int64
		if len(s.PreferredNodeSelectorTerms) > 0 {
			if terms, err := nodeaffinity.NewPreferredSchedulingTerms(s.PreferredNodeSelectorTerms); err == nil {
				score = terms.Score(node) * 100
			}
		}
		if len(s.Patch.Raw) > 0 && looksPatched(pod, s.Patch.Raw) {
			score += 10
		}
		if i < len(missing) && (missing[i] > 0 || missing[i] == Unlimited) {
			score++
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return best
}

func fits(pod *corev1.Pod, node *corev1.Node, s *appsv1alpha1.WorkloadSpreadSubset) bool {
	tolerations := append(append([]corev1.Toleration(nil), pod.Spec.Tolerations...), s.Tolerations...)
	noExecuteOrSchedule := func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}
	if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, tolerations, noExecuteOrSchedule, false); untolerated {
		return false
	}
	if s.RequiredNodeSelectorTerm == nil {
		return true
	}
	probe := &corev1.Pod{Spec: corev1.PodSpec{Affinity: pod.Spec.Affinity.DeepCopy()}}
	// Without a patch, Inject cannot fail.
	_ = Inject(probe, "", &appsv1alpha1.WorkloadSpreadSubset{Name: s.Name, RequiredNodeSelectorTerm: s.RequiredNodeSelectorTerm}, "")
	ok, err := corev1helpers.MatchNodeSelectorTerms(node, probe.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
	return err == nil && ok
}

// looksPatched tells whether applying patch would leave pod as it is, annotations aside.
func looksPatched(pod *corev1.Pod, patch []byte) bool {
	patched, err := ApplyPatch(pod, patch)
	if err != nil {
		return false
	}
	patched.Annotations = pod.Annotations
	return reflect.DeepEqual(pod, patched)
}

// ExistingPodPatch is the metadata the controller writes on a pod that predates the
// WorkloadSpread once it belongs to subset s: the labels and annotations of the subset's patch
// (unless ignorePatch) and the matched-workloadspread annotation.
func ExistingPodPatch(wsName string, s *appsv1alpha1.WorkloadSpreadSubset, ignorePatch bool) (labels, annotations map[string]string) {
	labels, annotations = map[string]string{}, map[string]string{}
	if len(s.Patch.Raw) > 0 && !ignorePatch {
		if p, err := ApplyPatch(&corev1.Pod{}, s.Patch.Raw); err == nil {
			for k, v := range p.Labels {
				labels[k] = v
			}
			for k, v := range p.Annotations {
				annotations[k] = v
			}
		}
	}
	annotations[appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations] = Injected{Name: wsName, Subset: s.Name}.Encode()
	return labels, annotations
}
