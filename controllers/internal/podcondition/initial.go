package podcondition

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
)

// Initial returns the first readiness conditions pod needs, all True, in the order of its
// gates, or none when it needs none:
//   - KruisePodReady when the pod carries its gate and has no such condition;
//   - InPlaceUpdateReady when the pod carries its gate, has no such condition and no in-place
//     update has ever started on it (no state or grace annotation): a new pod of a CloneSet,
//     an Advanced StatefulSet or an Advanced DaemonSet. Once an update starts, the workload
//     owns the condition.
//
// A pod being deleted needs none.
func Initial(pod *corev1.Pod, now metav1.Time) []corev1.PodCondition {
	if pod.DeletionTimestamp != nil {
		return nil
	}
	var out []corev1.PodCondition
	for _, g := range pod.Spec.ReadinessGates {
		if Get(pod, g.ConditionType) != nil {
			continue
		}
		switch g.ConditionType {
		case appspub.KruisePodReadyConditionType:
		case appspub.InPlaceUpdateReady:
			if inPlaceUpdateStarted(pod) {
				continue
			}
		default:
			continue
		}
		out = append(out, corev1.PodCondition{Type: g.ConditionType, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	return out
}

// inPlaceUpdateStarted reports whether an in-place update has been recorded on pod.
func inPlaceUpdateStarted(pod *corev1.Pod) bool {
	if _, ok := appspub.GetInPlaceUpdateState(pod); ok {
		return true
	}
	_, ok := appspub.GetInPlaceUpdateGrace(pod)
	return ok
}

// SetInitial writes the conditions Initial gives pod in one status patch, through Patch (so a
// condition another writer set in between is left alone), and returns the pod as written and the
// conditions; nothing is written when the pod needs none, and the pod is then nil. A new pod of
// a workload costs one status write for both its gates.
func SetInitial(ctx context.Context, c client.Client, fresh client.Reader, pod *corev1.Pod, now metav1.Time) (*corev1.Pod, []corev1.PodCondition, error) {
	var set []corev1.PodCondition
	wrote := false
	out, err := Patch(ctx, c, fresh, pod, func(cur *corev1.Pod) bool {
		set = Initial(cur, now)
		changed := false
		for _, cond := range set {
			changed = Set(cur, cond) || changed
		}
		wrote = changed
		return changed
	})
	if err != nil {
		return nil, nil, err
	}
	if !wrote {
		return nil, set, nil
	}
	return out, set, nil
}
