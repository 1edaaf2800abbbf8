package cloneset

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// gone waits until no live pod has the given name.
func gone(t *testing.T, ns, app, name string) {
	t.Helper()
	framework.WaitForPods(t, env.Client, ns, app, settle, "pod "+name+" is deleted", func(pods []corev1.Pod) error {
		for _, p := range pods {
			if p.Name == name {
				return fmt.Errorf("still there")
			}
		}
		return nil
	})
}

func TestDeleteAChosenPod(t *testing.T) {
	tests := map[string]func(t *testing.T, ns, pod string){
		"by scaleStrategy.podsToDelete": func(t *testing.T, ns, pod string) {
			change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.ScaleStrategy.PodsToDelete = []string{pod} })
		},
		"by the specified-delete label": func(t *testing.T, ns, pod string) {
			framework.MergePatch(t, env.Client, podRef(ns, pod), fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, appsv1alpha1.SpecifiedDeleteKey))
		},
	}
	for name, choose := range tests {
		t.Run(name, func(t *testing.T) {
			ns := newNamespace(t)
			create(t, kinds.CloneSet("web", ns).Replicas(3).Obj())
			waitSettled(t, ns, "web", 3, settle)
			before := framework.MustLivePods(t, env.Client, ns, "web")
			chosen := before[1].Name

			choose(t, ns, chosen)
			gone(t, ns, "web", chosen)
			waitSettled(t, ns, "web", 3, settle)
			after := framework.MustLivePods(t, env.Client, ns, "web")
			kept := 0
			for _, p := range after {
				if p.Name == chosen {
					t.Fatalf("pod %s is still there", chosen)
				}
				for _, b := range before {
					if b.UID == p.UID {
						kept++
					}
				}
			}
			if kept != 2 {
				t.Fatalf("%d of the other two pods kept, want 2: only the chosen pod goes", kept)
			}
			framework.Eventually(t, settle, "podsToDelete truncated once the pod is gone", func(ctx context.Context) error {
				if left := getCloneSet(t, ns, "web").Spec.ScaleStrategy.PodsToDelete; len(left) != 0 {
					return fmt.Errorf("podsToDelete %v", left)
				}
				return nil
			})
		})
	}
}

func TestPreDeleteHookHoldsAPodUntilScaledBackUp(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(2).TemplateLabel("hold", "true").PreDeleteHook("hold", "true").Obj())
	waitSettled(t, ns, "web", 2, settle)

	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](1) })
	var held string
	framework.WaitForPods(t, env.Client, ns, "web", settle, "one pod in PreparingDelete", func(pods []corev1.Pod) error {
		if len(pods) != 2 {
			return fmt.Errorf("%d pods, want both kept while the hook holds one", len(pods))
		}
		for _, p := range pods {
			if p.Labels[appspub.LifecycleStateKey] == string(appspub.LifecycleStatePreparingDelete) {
				held = p.Name
				return nil
			}
		}
		return fmt.Errorf("no pod in PreparingDelete")
	})
	// The hook holds it: another look a while later still finds it there, not replaced.
	framework.Eventually(t, settle, "status counts the held pod", func(ctx context.Context) error {
		cs := getCloneSet(t, ns, "web")
		if cs.Status.ObservedGeneration != cs.Generation || cs.Status.Replicas != 2 {
			return fmt.Errorf("status %+v", cs.Status)
		}
		return nil
	})

	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](2) })
	framework.WaitForPods(t, env.Client, ns, "web", settle, "the held pod back to Normal", func(pods []corev1.Pod) error {
		for _, p := range pods {
			if p.Name == held {
				if s := p.Labels[appspub.LifecycleStateKey]; s != string(appspub.LifecycleStateNormal) {
					return fmt.Errorf("state %q", s)
				}
				if len(pods) != 2 {
					return fmt.Errorf("%d pods, want 2 (no new pod)", len(pods))
				}
				return nil
			}
		}
		return fmt.Errorf("held pod %s is gone", held)
	})

	// Releasing the hook lets a scale-down delete the pod.
	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](1) })
	framework.WaitForPods(t, env.Client, ns, "web", settle, "a pod in PreparingDelete again", func(pods []corev1.Pod) error {
		for _, p := range pods {
			if p.Labels[appspub.LifecycleStateKey] == string(appspub.LifecycleStatePreparingDelete) {
				held = p.Name
				return nil
			}
		}
		return fmt.Errorf("none")
	})
	framework.MergePatch(t, env.Client, podRef(ns, held), `{"metadata":{"labels":{"hold":null}}}`)
	gone(t, ns, "web", held)
	waitSettled(t, ns, "web", 1, settle)
}

func TestPodDeletionCostDecidesWhichPodsGo(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(4).Obj())
	waitSettled(t, ns, "web", 4, settle)
	pods := framework.MustLivePods(t, env.Client, ns, "web")
	// The two pods with the highest cost stay; without costs the newest would go first, so give
	// the newest pods the highest cost.
	keep := map[string]bool{}
	for i, p := range pods {
		cost := "-10"
		if i >= 2 {
			cost = "1000"
			keep[p.Name] = true
		}
		framework.MergePatch(t, env.Client, podRef(ns, p.Name), fmt.Sprintf(`{"metadata":{"annotations":{"controller.kubernetes.io/pod-deletion-cost":%q}}}`, cost))
	}
	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](2) })
	waitSettled(t, ns, "web", 2, settle)
	for _, p := range framework.MustLivePods(t, env.Client, ns, "web") {
		if !keep[p.Name] {
			t.Errorf("pod %s with cost -10 was kept over a pod with cost 1000", p.Name)
		}
	}
}
