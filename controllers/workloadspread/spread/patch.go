package spread

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// Inject applies subset s of ws to pod and records the match:
//   - tolerations are appended;
//   - preferredNodeSelectorTerms are appended to the pod's preferred node affinity;
//   - requiredNodeSelectorTerm becomes the pod's only required term, or, when the pod has
//     required terms of its own, its expressions and fields are added to each of them (the terms
//     are ORed, so the subset's constraint must hold in every one);
//   - patch is merged into the pod as a strategic merge patch; when it changes
//     priorityClassName, spec.priority is cleared so the apiserver's priority admission sets
//     the matching value again;
//   - the apps.kruise.io/matched-workloadspread annotation names ws, the subset and uid.
func Inject(pod *corev1.Pod, wsName string, s *appsv1alpha1.WorkloadSpreadSubset, uid string) error {
	if len(s.Tolerations) > 0 {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, s.Tolerations...)
	}
	if len(s.PreferredNodeSelectorTerms) > 0 || s.RequiredNodeSelectorTerm != nil {
		if pod.Spec.Affinity == nil {
			pod.Spec.Affinity = &corev1.Affinity{}
		}
		if pod.Spec.Affinity.NodeAffinity == nil {
			pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
		}
		na := pod.Spec.Affinity.NodeAffinity
		na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution, s.PreferredNodeSelectorTerms...)
		if t := s.RequiredNodeSelectorTerm; t != nil {
			if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
				na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
			}
			req := na.RequiredDuringSchedulingIgnoredDuringExecution
			if len(req.NodeSelectorTerms) == 0 {
				req.NodeSelectorTerms = []corev1.NodeSelectorTerm{*t.DeepCopy()}
			} else {
				for i := range req.NodeSelectorTerms {
					term := &req.NodeSelectorTerms[i]
					term.MatchExpressions = append(term.MatchExpressions, t.MatchExpressions...)
					term.MatchFields = append(term.MatchFields, t.MatchFields...)
				}
			}
		}
	}
	if len(s.Patch.Raw) > 0 {
		patched, err := ApplyPatch(pod, s.Patch.Raw)
		if err != nil {
			return fmt.Errorf("subset %s patch: %w", s.Name, err)
		}
		if patched.Spec.PriorityClassName != pod.Spec.PriorityClassName {
			patched.Spec.Priority = nil
		}
		*pod = *patched
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[appsv1alpha1.MatchedWorkloadSpreadSubsetAnnotations] = Injected{Name: wsName, Subset: s.Name, UID: uid}.Encode()
	return nil
}

// ApplyPatch returns pod with raw merged in as a strategic merge patch; pod is left as it was.
func ApplyPatch(pod *corev1.Pod, raw []byte) (*corev1.Pod, error) {
	orig, err := json.Marshal(pod)
	if err != nil {
		return nil, fmt.Errorf("encode pod: %w", err)
	}
	merged, err := strategicpatch.StrategicMergePatch(orig, raw, &corev1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	out := &corev1.Pod{}
	if err := json.Unmarshal(merged, out); err != nil {
		return nil, fmt.Errorf("decode patched pod: %w", err)
	}
	return out, nil
}
