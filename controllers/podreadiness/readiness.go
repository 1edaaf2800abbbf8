package podreadiness

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcondition"
)

// initialCondition returns the condition to add to pod and true, or false when the pod needs
// none: it is being deleted, has no KruisePodReady gate, or already has the condition.
func initialCondition(pod *corev1.Pod, now metav1.Time) (corev1.PodCondition, bool) {
	if pod.DeletionTimestamp != nil || !podcondition.HasGate(pod, appspub.KruisePodReadyConditionType) ||
		podcondition.Get(pod, appspub.KruisePodReadyConditionType) != nil {
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
