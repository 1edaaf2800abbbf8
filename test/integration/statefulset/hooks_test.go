package statefulset

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

const hookLabel = "example.com/hooked"

func lifecycleHooks(preDelete, inPlaceUpdate bool) func(*appsv1beta1.StatefulSet) {
	return func(s *appsv1beta1.StatefulSet) {
		s.Spec.Lifecycle = &appspub.Lifecycle{}
		if preDelete {
			s.Spec.Lifecycle.PreDelete = &appspub.LifecycleHook{LabelsHandler: map[string]string{hookLabel: "true"}}
		}
		if inPlaceUpdate {
			s.Spec.Lifecycle.InPlaceUpdate = &appspub.LifecycleHook{LabelsHandler: map[string]string{hookLabel: "true"}}
		}
		s.Spec.Template.Labels[hookLabel] = "true"
	}
}

func getPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	p := &corev1.Pod{}
	return p, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p)
}

func waitState(t *testing.T, ns, pod string, want appspub.LifecycleStateType) *corev1.Pod {
	t.Helper()
	return framework.WaitFor(t, env.Client, client.ObjectKey{Namespace: ns, Name: pod}, framework.Medium, fmt.Sprintf("pod %s is %s", pod, want), func(p *corev1.Pod) error {
		return framework.Want(p.Labels[appspub.LifecycleStateKey] == string(want), p.Labels[appspub.LifecycleStateKey])
	})
}

// release removes the hook label from a pod, as the user's hook does once it is done.
func release(t *testing.T, ns, pod string) {
	t.Helper()
	patchPodLabel(t, ns, pod, hookLabel, "")
}

func TestARecreateGoesThroughThePreDeleteHookNotTheInPlaceUpdateHook(t *testing.T) {
	ns := newNamespace(t)
	createSettled(t, newSet("ss", ns, 2, parallel, lifecycleHooks(true, true)), "ss-0", "ss-1")

	// A recreate is a deletion: the preDelete hook holds it, the inPlaceUpdate hook does not.
	uid := framework.MustLivePods(t, env.Client, ns, "ss")[1].UID
	change(t, ns, "ss", withEnv("MODE", "new"))
	waitState(t, ns, "ss-1", appspub.LifecycleStatePreparingDelete)
	framework.Consistently(t, framework.Short/2, "ss-1 stays while the hook holds it", func(ctx context.Context) error {
		p, err := getPod(ctx, ns, "ss-1")
		if err != nil {
			return err
		}
		return framework.Want(p.UID == uid && p.DeletionTimestamp == nil, "ss-1 was deleted")
	})
	release(t, ns, "ss-1")
	framework.Eventually(t, rollout, "ss-1 is recreated once the hook lets go", func(ctx context.Context) error {
		p, err := getPod(ctx, ns, "ss-1")
		if err != nil {
			return err
		}
		return framework.Want(p.UID != uid, "ss-1 not recreated")
	})
	release(t, ns, "ss-0")
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1")
}

func TestInPlaceUpdateHookHoldsOnlyInPlaceUpdates(t *testing.T) {
	ns := newNamespace(t)
	createSettled(t, newSet("ss", ns, 1, inPlace(appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType), lifecycleHooks(false, true)), "ss-0")
	uid := framework.MustLivePods(t, env.Client, ns, "ss")[0].UID
	change(t, ns, "ss", setImage(imageV2))
	waitState(t, ns, "ss-0", appspub.LifecycleStatePreparingUpdate)
	framework.Consistently(t, framework.Short/2, "ss-0 keeps its image while the hook holds it", func(ctx context.Context) error {
		p, err := getPod(ctx, ns, "ss-0")
		if err != nil {
			return err
		}
		return framework.Want(imageOf(p) == imageV1, imageOf(p))
	})
	release(t, ns, "ss-0")
	pods := waitImages(t, ns, "ss", imageV2, 1)
	if pods[0].UID != uid {
		t.Errorf("ss-0 was recreated; the update goes in place")
	}
}
