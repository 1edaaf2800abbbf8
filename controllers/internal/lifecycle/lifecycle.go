package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
)

// State returns the pod's lifecycle state; a pod without the label is Normal.
func State(pod *corev1.Pod) appspub.LifecycleStateType {
	if s, ok := pod.Labels[appspub.LifecycleStateKey]; ok && s != "" {
		return appspub.LifecycleStateType(s)
	}
	return appspub.LifecycleStateNormal
}

// IsHooked reports whether hook holds pod: the pod carries at least one of the hook's labels
// (with its value) or finalizers.
func IsHooked(hook *appspub.LifecycleHook, pod *corev1.Pod) bool {
	if hook == nil {
		return false
	}
	for k, v := range hook.LabelsHandler {
		if pod.Labels[k] == v {
			return true
		}
	}
	for _, f := range hook.FinalizersHandler {
		for _, pf := range pod.Finalizers {
			if f == pf {
				return true
			}
		}
	}
	return false
}

// IsAllHooked reports whether pod carries every label and finalizer of hook, which is how an
// operator says a pod may leave PreparingNormal or Updated.
func IsAllHooked(hook *appspub.LifecycleHook, pod *corev1.Pod) bool {
	if hook == nil {
		return true
	}
	for k, v := range hook.LabelsHandler {
		if pod.Labels[k] != v {
			return false
		}
	}
	for _, f := range hook.FinalizersHandler {
		found := false
		for _, pf := range pod.Finalizers {
			if f == pf {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Mover writes lifecycle states.
type Mover struct {
	Client client.Client
	Clock  clock.PassiveClock
}

// Move sets pod's lifecycle state (and its timestamp) and, when markNotReady is set, turns the
// pod's KruisePodReady condition False so that it leaves Service endpoints; moving to Normal turns
// it back True. It returns the patched pod.
func (m Mover) Move(ctx context.Context, pod *corev1.Pod, state appspub.LifecycleStateType, markNotReady bool) (*corev1.Pod, error) {
	patch := map[string]any{"metadata": map[string]any{"labels": map[string]string{
		appspub.LifecycleStateKey:     string(state),
		appspub.LifecycleTimestampKey: strconv.FormatInt(m.Clock.Now().Unix(), 10),
	}}}
	raw, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	out := pod.DeepCopy()
	if err := m.Client.Patch(ctx, out, client.RawPatch(types.StrategicMergePatchType, raw)); err != nil {
		return nil, fmt.Errorf("move pod %s to %s: %w", pod.Name, state, err)
	}
	if !hasGate(out, appspub.KruisePodReadyConditionType) {
		return out, nil
	}
	want := corev1.ConditionTrue
	if markNotReady && state != appspub.LifecycleStateNormal {
		want = corev1.ConditionFalse
	} else if !markNotReady {
		return out, nil
	}
	if c := condition(out, appspub.KruisePodReadyConditionType); c != nil && c.Status == want {
		return out, nil
	}
	setCondition(out, corev1.PodCondition{Type: appspub.KruisePodReadyConditionType, Status: want, Reason: "Lifecycle" + string(state), LastTransitionTime: metav1.NewTime(m.Clock.Now())})
	if err := m.Client.Status().Update(ctx, out); err != nil {
		return nil, fmt.Errorf("set %s on pod %s: %w", appspub.KruisePodReadyConditionType, pod.Name, err)
	}
	return out, nil
}

func hasGate(pod *corev1.Pod, t corev1.PodConditionType) bool {
	for _, g := range pod.Spec.ReadinessGates {
		if g.ConditionType == t {
			return true
		}
	}
	return false
}

func condition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func setCondition(pod *corev1.Pod, c corev1.PodCondition) {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == c.Type {
			pod.Status.Conditions[i] = c
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, c)
}
