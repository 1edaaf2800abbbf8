package podreadiness

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
)

// initialCondition returns the condition to add to pod and true, or false when the pod needs
// none: it is being deleted, has no KruisePodReady gate, or already has the condition.
func initialCondition(pod *corev1.Pod, now metav1.Time) (corev1.PodCondition, bool) {
	if pod.DeletionTimestamp != nil || !hasGate(pod) || findCondition(pod) != nil {
		return corev1.PodCondition{}, false
	}
	return corev1.PodCondition{
		Type:               appspub.KruisePodReadyConditionType,
		Status:             corev1.ConditionTrue,
		LastTransitionTime: now,
	}, true
}

func needsInitialCondition(obj client.Object) bool {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return false
	}
	_, needed := initialCondition(pod, metav1.Time{})
	return needed
}

func hasGate(pod *corev1.Pod) bool {
	for _, g := range pod.Spec.ReadinessGates {
		if g.ConditionType == appspub.KruisePodReadyConditionType {
			return true
		}
	}
	return false
}

func findCondition(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == appspub.KruisePodReadyConditionType {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}
