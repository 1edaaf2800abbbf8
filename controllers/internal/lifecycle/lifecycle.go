package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcondition"
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
	// Reader reads the apiserver itself when a condition write conflicted (see
	// podcondition.Patch); nil reads through Client.
	Reader client.Reader
	Clock  clock.PassiveClock
}

// Move sets pod's lifecycle state (and its timestamp) and returns the patched pod. With
// markNotReady, moving to a state other than Normal takes a hold on the pod's KruisePodReady
// condition, which turns it False so that the pod leaves Service endpoints; moving to Normal lets
// go of every hold the lifecycle took, whatever markNotReady says, so a pod the hooks no longer
// hold is ready again unless another holder (a container recreation) keeps it not ready.
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
	if !podcondition.HasGate(out, appspub.KruisePodReadyConditionType) {
		return out, nil
	}
	now := metav1.NewTime(m.Clock.Now())
	var change func(*corev1.Pod) bool
	switch {
	case state == appspub.LifecycleStateNormal:
		change = func(p *corev1.Pod) bool { return releaseHolds(p, now) }
	case markNotReady:
		change = func(p *corev1.Pod) bool { return podcondition.Hold(p, holder(state), now) }
	default:
		return out, nil
	}
	out, err = podcondition.Patch(ctx, m.Client, m.Reader, out, change)
	if err != nil {
		return nil, fmt.Errorf("set %s on pod %s for state %s: %w", appspub.KruisePodReadyConditionType, pod.Name, state, err)
	}
	return out, nil
}

// holder is the lifecycle's hold on KruisePodReady while a pod is in state.
func holder(state appspub.LifecycleStateType) podcondition.Holder {
	return podcondition.Holder{UserAgent: "Lifecycle", Key: string(state)}
}

// releaseHolds lets go of every hold the lifecycle has on the pod's KruisePodReady condition
// and reports whether the pod changed. A condition set False without a list of holders, with a
// Lifecycle reason, is how earlier releases of the add-on held a pod: it goes True as well.
func releaseHolds(p *corev1.Pod, now metav1.Time) bool {
	changed := false
	// The lifecycle holds a pod not ready only in these states.
	for _, s := range []appspub.LifecycleStateType{appspub.LifecycleStatePreparingDelete, appspub.LifecycleStatePreparingUpdate} {
		if podcondition.Release(p, holder(s), now) {
			changed = true
		}
	}
	c := podcondition.Get(p, appspub.KruisePodReadyConditionType)
	if c != nil && c.Status == corev1.ConditionFalse && len(podcondition.Holders(p)) == 0 && strings.HasPrefix(c.Reason, "Lifecycle") {
		changed = podcondition.Set(p, corev1.PodCondition{Type: appspub.KruisePodReadyConditionType, Status: corev1.ConditionTrue, LastTransitionTime: now}) || changed
	}
	return changed
}
