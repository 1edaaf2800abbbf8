package podcondition

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
)

// Get returns the pod's condition of type t, or nil. The pointer is into the pod's status.
func Get(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// Set puts c into the pod's status in place of the condition of its type, or adds it. When the
// status does not change, the existing LastTransitionTime is kept, since no transition happened.
// It reports whether the pod changed.
func Set(pod *corev1.Pod, c corev1.PodCondition) bool {
	cur := Get(pod, c.Type)
	if cur == nil {
		pod.Status.Conditions = append(pod.Status.Conditions, c)
		return true
	}
	if cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	if cur.Status == c.Status && cur.Reason == c.Reason && cur.Message == c.Message {
		return false
	}
	*cur = c
	return true
}

// HasGate reports whether the pod's spec lists the readiness gate t.
func HasGate(pod *corev1.Pod, t corev1.PodConditionType) bool {
	for _, g := range pod.Spec.ReadinessGates {
		if g.ConditionType == t {
			return true
		}
	}
	return false
}

// AddGate adds the readiness gate t to a pod that does not list it yet, and reports whether it
// did. Readiness gates cannot change once a pod exists: it is for pods about to be created.
func AddGate(pod *corev1.Pod, t corev1.PodConditionType) bool {
	if HasGate(pod, t) {
		return false
	}
	pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: t})
	return true
}

// Holder is one reason to keep a pod's KruisePodReady condition False: who holds it (UserAgent,
// such as "Lifecycle" or "ContainerRecreateRequest") and for what (Key). The JSON shape is the
// one other tools read from the condition's message.
type Holder struct {
	UserAgent string `json:"userAgent"`
	Key       string `json:"key"`
}

// Hold adds h to the holders of the pod's KruisePodReady condition, which makes it False, and
// reports whether the pod changed. now is the transition time if the status changes.
func Hold(pod *corev1.Pod, h Holder, now metav1.Time) bool {
	return setHolder(pod, h, true, now)
}

// Release removes h from the holders of the pod's KruisePodReady condition; the condition goes
// True when no holder is left. It reports whether the pod changed.
func Release(pod *corev1.Pod, h Holder, now metav1.Time) bool {
	return setHolder(pod, h, false, now)
}

// Holders returns the holders listed in the pod's KruisePodReady condition. A message that is
// not a list of holders counts as none.
func Holders(pod *corev1.Pod) []Holder {
	c := Get(pod, appspub.KruisePodReadyConditionType)
	if c == nil || c.Message == "" {
		return nil
	}
	var hs []Holder
	if err := json.Unmarshal([]byte(c.Message), &hs); err != nil {
		return nil
	}
	return hs
}

func setHolder(pod *corev1.Pod, h Holder, hold bool, now metav1.Time) bool {
	hs := Holders(pod)
	at := slices.Index(hs, h)
	cur := Get(pod, appspub.KruisePodReadyConditionType)
	switch {
	case hold && at >= 0 && cur.Status == corev1.ConditionFalse:
		return false
	case hold && at < 0:
		hs = append(hs, h)
	case !hold && at < 0:
		return false
	case !hold:
		hs = slices.Delete(hs, at, at+1)
	}
	c := corev1.PodCondition{Type: appspub.KruisePodReadyConditionType, Status: corev1.ConditionTrue, LastTransitionTime: now}
	if len(hs) > 0 {
		c.Status = corev1.ConditionFalse
		b, _ := json.Marshal(hs) // a list of string pairs always encodes
		c.Message = string(b)
	}
	return Set(pod, c)
}

// Patch applies change to the pod and writes the pod's status with a patch that carries the
// resourceVersion it started from. change reports whether it changed anything; when it did not,
// nothing is written. On a conflict (the kubelet, or another controller, wrote the pod in
// between) Patch reads the pod again through fresh and applies change to that, until the write
// goes through or retry.DefaultBackoff gives up. fresh should read the apiserver itself (the
// manager's API reader): an informer cache that has not seen the write Patch lost to hands back
// the same stale pod, and every retry then conflicts again, each after a longer sleep. A nil
// fresh reads through c. It returns the pod as written, or as read when nothing changed; pod
// itself is not modified.
func Patch(ctx context.Context, c client.Client, fresh client.Reader, pod *corev1.Pod, change func(*corev1.Pod) bool) (*corev1.Pod, error) {
	if fresh == nil {
		fresh = c
	}
	cur := pod.DeepCopy()
	first := true
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if !first {
			cur = &corev1.Pod{}
			if err := fresh.Get(ctx, client.ObjectKeyFromObject(pod), cur); err != nil {
				return err
			}
		}
		first = false
		orig := cur.DeepCopy()
		if !change(cur) {
			return nil
		}
		return c.Status().Patch(ctx, cur, client.StrategicMergeFrom(orig, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		return nil, fmt.Errorf("write the status of pod %s: %w", pod.Name, err)
	}
	return cur, nil
}

// PatchOwn writes condition c to the pod's status with a strategic merge patch that carries no
// resourceVersion, for a condition type only the caller writes (a workload's
// InPlaceUpdateReady): the patch replaces that one condition and leaves every other condition
// and field as the apiserver has it, so the kubelet's writes need no retry. It returns the pod
// as written. A condition shared by several writers (KruisePodReady) must go through Patch.
func PatchOwn(ctx context.Context, c client.Client, pod *corev1.Pod, cond corev1.PodCondition) (*corev1.Pod, error) {
	raw, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{cond}}})
	if err != nil {
		return nil, fmt.Errorf("encode condition %s: %w", cond.Type, err)
	}
	out := pod.DeepCopy()
	if err := c.Status().Patch(ctx, out, client.RawPatch(types.StrategicMergePatchType, raw)); err != nil {
		return nil, fmt.Errorf("write condition %s of pod %s: %w", cond.Type, pod.Name, err)
	}
	return out, nil
}
