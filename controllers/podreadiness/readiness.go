package podreadiness

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcondition"
)

// initialConditions returns the first readiness conditions pod needs, all True, in the order
// of its gates, or none when it needs none:
//   - KruisePodReady when the pod carries its gate and has no such condition;
//   - InPlaceUpdateReady when the pod carries its gate, has no such condition and no in-place
//     update has ever started on it (no state or grace annotation): a new pod of a CloneSet,
//     an Advanced StatefulSet or an Advanced DaemonSet. Once an update starts, the workload
//     owns the condition.
//
// A pod being deleted needs none. Both conditions go in one write, so a new pod of a workload
// costs one status write here rather than one for each gate.
func initialConditions(pod *corev1.Pod, now metav1.Time) []corev1.PodCondition {
	if pod.DeletionTimestamp != nil {
		return nil
	}
	var out []corev1.PodCondition
	for _, g := range pod.Spec.ReadinessGates {
		if podcondition.Get(pod, g.ConditionType) != nil {
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

func needsInitialCondition(obj client.Object) bool {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return false
	}
	return len(initialConditions(pod, metav1.Time{})) > 0
}
