package cloneset

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// hookedCloneSet is a one-pod InPlaceIfPossible CloneSet whose pods carry hold=true, held by the
// hooks that hook sets.
func hookedCloneSet(ns string, hook func(*appspub.Lifecycle)) *appsv1alpha1.CloneSet {
	cs := kinds.CloneSet("web", ns).Replicas(1).Image(imageV1).TemplateLabel("hold", "true").
		UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).Obj()
	cs.Spec.Lifecycle = &appspub.Lifecycle{}
	hook(cs.Spec.Lifecycle)
	return cs
}

// createOne creates cs, a one-pod CloneSet, waits until it settles and returns its pod.
func createOne(t *testing.T, cs *appsv1alpha1.CloneSet) corev1.Pod {
	t.Helper()
	create(t, cs)
	waitSettled(t, cs.Namespace, cs.Name, 1, settle)
	return framework.MustLivePods(t, env.Client, cs.Namespace, cs.Name)[0]
}

func holdWith(l map[string]string) *appspub.LifecycleHook {
	return &appspub.LifecycleHook{LabelsHandler: l}
}

// getPod reads a pod; gone is true when it no longer exists or is terminating.
func getPod(ctx context.Context, ns, name string, uid types.UID) (pod *corev1.Pod, gone bool, err error) {
	pod = &corev1.Pod{}
	if err := env.Client.Get(ctx, clientKey(ns, name), pod); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return nil, true, nil
		}
		return nil, false, err
	}
	if pod.UID != uid || pod.DeletionTimestamp != nil {
		return nil, true, nil
	}
	return pod, false, nil
}

// keptPod reads old's pod and fails t when it is gone: the pod must stay, for the reason
// that why gives after "was deleted".
func keptPod(ctx context.Context, t *testing.T, ns string, old corev1.Pod, why string) (*corev1.Pod, error) {
	t.Helper()
	p, gone, err := getPod(ctx, ns, old.Name, old.UID)
	if err == nil && gone {
		t.Fatalf("pod %s was deleted%s", old.Name, why)
	}
	return p, err
}

// release takes the hold=true label off a pod, which lets its hook go.
func release(t *testing.T, ns, name string) {
	t.Helper()
	framework.MergePatch(t, env.Client, podRef(ns, name), `{"metadata":{"labels":{"hold":"false"}}}`)
}

func state(p *corev1.Pod) appspub.LifecycleStateType {
	return appspub.LifecycleStateType(p.Labels[appspub.LifecycleStateKey])
}

func TestUpdatesGoThroughTheHookOfTheirRoute(t *testing.T) {
	envChange := withEnv("MODE", "fast")
	t.Run("a recreate update waits in PreparingDelete while the preDelete hook holds the pod", func(t *testing.T) {
		ns := newNamespace(t)
		old := createOne(t, hookedCloneSet(ns, func(l *appspub.Lifecycle) { l.PreDelete = holdWith(map[string]string{"hold": "true"}) }))

		change(t, ns, "web", envChange)
		framework.Eventually(t, settle, "the old pod in PreparingDelete, alone: its replacement comes once it is gone", func(ctx context.Context) error {
			p, err := keptPod(ctx, t, ns, old, " while the preDelete hook held it")
			if err != nil {
				return err
			}
			if state(p) != appspub.LifecycleStatePreparingDelete {
				return fmt.Errorf("pod %s in state %q", p.Name, state(p))
			}
			pods, err := framework.LivePods(ctx, env.Client, ns, "web")
			if err != nil {
				return err
			}
			if len(pods) != 1 {
				t.Fatalf("%d live pods while the hook holds %s; the held pod still counts as the one replica", len(pods), old.Name)
			}
			return nil
		})
		// The old pod is still held: the hook, not time, decides.
		if _, gone, err := getPod(context.Background(), ns, old.Name, old.UID); err != nil || gone {
			t.Fatalf("pod %s: gone %v, err %v; the preDelete hook still holds it", old.Name, gone, err)
		}

		release(t, ns, old.Name)
		framework.Eventually(t, settle, "the released pod deleted", func(ctx context.Context) error {
			if _, gone, err := getPod(ctx, ns, old.Name, old.UID); err != nil || !gone {
				return fmt.Errorf("pod %s still there (err %v)", old.Name, err)
			}
			return nil
		})
		cs := waitSettled(t, ns, "web", 1, settle)
		if p := framework.MustLivePods(t, env.Client, ns, "web")[0]; p.Spec.Containers[0].Env[0].Value != "fast" || p.Labels["controller-revision-hash"] != cs.Status.UpdateRevision {
			t.Fatalf("pod %s is not at the update revision %s", p.Name, cs.Status.UpdateRevision)
		}
	})

	t.Run("an in-place update waits in PreparingUpdate while the inPlaceUpdate hook holds the pod", func(t *testing.T) {
		ns := newNamespace(t)
		old := createOne(t, hookedCloneSet(ns, func(l *appspub.Lifecycle) { l.InPlaceUpdate = holdWith(map[string]string{"hold": "true"}) }))

		change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = imageV2 })
		framework.Eventually(t, settle, "the pod in PreparingUpdate at the old image", func(ctx context.Context) error {
			p, err := keptPod(ctx, t, ns, old, "; an image change goes in place")
			if err != nil {
				return err
			}
			if p.Spec.Containers[0].Image != imageV1 {
				t.Fatalf("pod %s updated to %s while the inPlaceUpdate hook held it", p.Name, p.Spec.Containers[0].Image)
			}
			if state(p) != appspub.LifecycleStatePreparingUpdate {
				return fmt.Errorf("pod %s in state %q", p.Name, state(p))
			}
			return nil
		})

		release(t, ns, old.Name)
		framework.Eventually(t, settle, "the released pod updated in place", func(ctx context.Context) error {
			p, err := keptPod(ctx, t, ns, old, "; an image change goes in place")
			if err != nil {
				return err
			}
			if p.Spec.Containers[0].Image != imageV2 {
				return fmt.Errorf("pod %s at image %s in state %q", p.Name, p.Spec.Containers[0].Image, state(p))
			}
			return nil
		})
	})

	t.Run("a recreate update is not held by an inPlaceUpdate hook", func(t *testing.T) {
		ns := newNamespace(t)
		old := createOne(t, hookedCloneSet(ns, func(l *appspub.Lifecycle) { l.InPlaceUpdate = holdWith(map[string]string{"hold": "true"}) }))

		change(t, ns, "web", envChange)
		framework.Eventually(t, settle, "the pod recreated without waiting in PreparingUpdate", func(ctx context.Context) error {
			p, gone, err := getPod(ctx, ns, old.Name, old.UID)
			if err != nil {
				return err
			}
			if gone {
				return nil
			}
			if state(p) == appspub.LifecycleStatePreparingUpdate {
				t.Fatalf("pod %s held in PreparingUpdate, but it is recreated, not updated in place", p.Name)
			}
			return fmt.Errorf("pod %s still there, in state %q", p.Name, state(p))
		})
		waitSettled(t, ns, "web", 1, settle)
	})
}

func TestInPlaceOnlyChangeThatCannotGoInPlaceSetsFailedUpdate(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(1).UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).Paused(true).Obj())
	waitSettled(t, ns, "web", 1, settle)
	old := framework.MustLivePods(t, env.Client, ns, "web")[0]

	// The webhook refuses a change InPlaceOnly cannot do, so the change is made while paused
	// under InPlaceIfPossible, and then the strategy becomes InPlaceOnly.
	change(t, ns, "web", withEnv("MODE", "fast"))
	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) {
		cs.Spec.UpdateStrategy.Type = appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
		cs.Spec.UpdateStrategy.Paused = false
	})
	framework.Eventually(t, settle, "FailedUpdate naming the pod", func(ctx context.Context) error {
		cs := getCloneSet(t, ns, "web")
		if cs.Status.ObservedGeneration != cs.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", cs.Status.ObservedGeneration, cs.Generation)
		}
		for _, c := range cs.Status.Conditions {
			if c.Type == appsv1alpha1.CloneSetConditionFailedUpdate && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, old.Name) && strings.Contains(c.Message, "InPlaceOnly") {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", cs.Status.Conditions)
	})
	if _, gone, err := getPod(context.Background(), ns, old.Name, old.UID); err != nil || gone {
		t.Fatalf("pod %s: gone %v, err %v; an InPlaceOnly update must not delete it", old.Name, gone, err)
	}

	// The condition is the plan's outcome, not a sticky error: once the plan no longer tries the
	// update (here, paused), it is dropped.
	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.UpdateStrategy.Paused = true })
	framework.Eventually(t, settle, "FailedUpdate dropped", func(ctx context.Context) error {
		cs := getCloneSet(t, ns, "web")
		for _, c := range cs.Status.Conditions {
			if c.Type == appsv1alpha1.CloneSetConditionFailedUpdate {
				return fmt.Errorf("still %+v", c)
			}
		}
		return nil
	})
	if _, gone, err := getPod(context.Background(), ns, old.Name, old.UID); err != nil || gone {
		t.Fatalf("pod %s: gone %v, err %v", old.Name, gone, err)
	}
}

// setHold sets the hold label of a pod to value, which lets the hook go ("false") or tells it
// the operator is done ("true").
func setHold(t *testing.T, ns, name, value string) {
	t.Helper()
	framework.MergePatch(t, env.Client, podRef(ns, name), fmt.Sprintf(`{"metadata":{"labels":{"hold":%q}}}`, value))
}

func TestInPlaceUpdateHookWithMarkPodNotReadyMakesThePodReadyAgainAfterwards(t *testing.T) {
	ns := newNamespace(t)
	old := createOne(t, hookedCloneSet(ns, func(l *appspub.Lifecycle) {
		l.InPlaceUpdate = holdWith(map[string]string{"hold": "true"})
		l.InPlaceUpdate.MarkPodNotReady = true
	}))
	// podStateIs waits for the pod, updated in place and so never gone, to be in state with
	// KruisePodReady at ready.
	podStateIs := func(what string, want appspub.LifecycleStateType, ready corev1.ConditionStatus, image string) {
		t.Helper()
		framework.Eventually(t, framework.Medium, what, func(ctx context.Context) error {
			p, err := keptPod(ctx, t, ns, old, "; an image change goes in place")
			if err != nil {
				return err
			}
			got := fmt.Sprintf("state %q, %s %q, image %s", state(p), appspub.KruisePodReadyConditionType, framework.PodCondition(p, appspub.KruisePodReadyConditionType), p.Spec.Containers[0].Image)
			return framework.Want(state(p) == want && framework.PodCondition(p, appspub.KruisePodReadyConditionType) == ready && p.Spec.Containers[0].Image == image, got)
		})
	}
	podStateIs("the pod ready before the update", appspub.LifecycleStateNormal, corev1.ConditionTrue, imageV1)

	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = imageV2 })
	podStateIs("the pod held in PreparingUpdate and marked not ready", appspub.LifecycleStatePreparingUpdate, corev1.ConditionFalse, imageV1)

	setHold(t, ns, old.Name, "false")
	podStateIs("the pod updated in place, waiting in Updated for the hook's label", appspub.LifecycleStateUpdated, corev1.ConditionFalse, imageV2)

	setHold(t, ns, old.Name, "true")
	podStateIs("the pod back to Normal and ready again", appspub.LifecycleStateNormal, corev1.ConditionTrue, imageV2)
	waitSettled(t, ns, "web", 1, settle)
}

// TestSpecifiedDeleteHeldByPreDeleteStillCountsAsAReplica checks a pod marked specified-delete
// that the preDelete hook holds in PreparingDelete keeps counting as a replica: no replacement
// is created and status.replicas stays 3 until the hook lets it go; with the
// apps.kruise.io/cloneset-scaling-exclude-preparing-delete label the replacement comes at once.
func TestSpecifiedDeleteHeldByPreDeleteStillCountsAsAReplica(t *testing.T) {
	for _, exclude := range []bool{false, true} {
		t.Run(fmt.Sprintf("exclude-preparing-delete=%v", exclude), func(t *testing.T) {
			ns := newNamespace(t)
			cs := kinds.CloneSet("web", ns).Replicas(3).TemplateLabel("hold", "true").PreDeleteHook("hold", "true").Obj()
			if exclude {
				cs.Labels = map[string]string{appsv1alpha1.CloneSetScalingExcludePreparingDeleteKey: "true"}
			}
			create(t, cs)
			waitSettled(t, ns, "web", 3, settle)
			first := framework.MustLivePods(t, env.Client, ns, "web")[0]
			chosen := first.Name

			framework.MergePatch(t, env.Client, podRef(ns, chosen), fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, appsv1alpha1.SpecifiedDeleteKey))
			framework.Eventually(t, settle, "the chosen pod in PreparingDelete", func(ctx context.Context) error {
				p, gone, err := getPod(ctx, ns, chosen, first.UID)
				if err != nil {
					return err
				}
				if gone {
					return fmt.Errorf("pod %s gone while the hook holds it", chosen)
				}
				return framework.Want(state(p) == appspub.LifecycleStatePreparingDelete, fmt.Sprintf("state %q", state(p)))
			})
			if exclude {
				framework.WaitForPods(t, env.Client, ns, "web", settle, "a replacement beside the held pod", func(pods []corev1.Pod) error {
					return framework.Want(len(pods) == 4, fmt.Sprintf("%d live pods", len(pods)))
				})
				return
			}
			framework.Consistently(t, 3*time.Second, "no replacement while the hook holds the pod", func(ctx context.Context) error {
				pods, err := framework.LivePods(ctx, env.Client, ns, "web")
				if err != nil {
					return err
				}
				got := getCloneSet(t, ns, "web").Status.Replicas
				return framework.Want(len(pods) == 3 && got == 3, fmt.Sprintf("%d live pods, status.replicas %d", len(pods), got))
			})
			release(t, ns, chosen)
			gone(t, ns, "web", chosen)
			waitSettled(t, ns, "web", 3, settle)
		})
	}
}
