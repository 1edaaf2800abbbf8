package containerrecreaterequest

import (
	"encoding/json"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
)

// notReadyKey is one holder of a pod's KruisePodReady condition at False. The condition's
// message is the JSON list of holders; the pod is ready again when the list is empty. The
// shape is 1.8's, so other holders (lifecycle hooks) can share the condition.
type notReadyKey struct {
	UserAgent string `json:"userAgent"`
	Key       string `json:"key"`
}

const userAgent = "ContainerRecreateRequest"

func hasGate(pod *corev1.Pod) bool {
	for _, g := range pod.Spec.ReadinessGates {
		if g.ConditionType == appspub.KruisePodReadyConditionType {
			return true
		}
	}
	return false
}

// withKey returns the pod's status with key added to (add) or removed from the holders of
// KruisePodReady, and whether anything changed.
func withKey(pod *corev1.Pod, key notReadyKey, add bool, now metav1.Time) (corev1.PodStatus, bool) {
	st := *pod.Status.DeepCopy()
	i := slices.IndexFunc(st.Conditions, func(c corev1.PodCondition) bool { return c.Type == appspub.KruisePodReadyConditionType })
	if i < 0 {
		if !add {
			return st, false
		}
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: appspub.KruisePodReadyConditionType})
		i = len(st.Conditions) - 1
	}
	cond := &st.Conditions[i]
	var keys []notReadyKey
	if cond.Message != "" {
		_ = json.Unmarshal([]byte(cond.Message), &keys) // a foreign message counts as no holders
	}
	at := slices.Index(keys, key)
	switch {
	case add && at >= 0 && cond.Status == corev1.ConditionFalse:
		return st, false
	case add && at < 0:
		keys = append(keys, key)
	case !add && at < 0:
		return st, false
	case !add:
		keys = slices.Delete(keys, at, at+1)
	}
	status := corev1.ConditionTrue
	if len(keys) > 0 {
		status = corev1.ConditionFalse
	}
	msg := ""
	if len(keys) > 0 {
		b, _ := json.Marshal(keys)
		msg = string(b)
	}
	if cond.Status != status {
		cond.LastTransitionTime = now
	}
	cond.Status, cond.Message = status, msg
	return st, true
}
