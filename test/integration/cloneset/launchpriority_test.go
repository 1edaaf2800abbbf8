package cloneset

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

const (
	sidecarV1 = "registry.example.com/sidecar:1"
	sidecarV2 = "registry.example.com/sidecar:2"
)

// prioritizedCloneSet is one replica of an app container "main" (no priority, so 0) and a
// container "sidecar" with KRUISE_CONTAINER_PRIORITY=10, updated in place.
func prioritizedCloneSet(ns string) *appsv1alpha1.CloneSet {
	cs := kinds.CloneSet("web", ns).Replicas(1).Image(imageV1).ContainerImage("sidecar", sidecarV1).
		UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).Obj()
	cs.Spec.Template.Spec.Containers[1].Env = []corev1.EnvVar{{Name: appspub.ContainerLaunchPriorityEnvName, Value: "10"}}
	return cs
}

// podVersions records every version of the test's pods a watch delivers.
type podVersions struct {
	mu   sync.Mutex
	pods []corev1.Pod
}

func watchPodVersions(t *testing.T, ns string) *podVersions {
	v := &podVersions{}
	add := func(p *corev1.Pod) {
		v.mu.Lock()
		defer v.mu.Unlock()
		v.pods = append(v.pods, *p.DeepCopy())
	}
	env.WatchPods(t, ns, "app=web", add, func(_ watch.EventType, p *corev1.Pod) { add(p) })
	return v
}

func (v *podVersions) all() []corev1.Pod {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]corev1.Pod(nil), v.pods...)
}

func specImage(p *corev1.Pod, container string) string {
	for _, c := range p.Spec.Containers {
		if c.Name == container {
			return c.Image
		}
	}
	return ""
}

func updateState(t *testing.T, p *corev1.Pod) *appspub.InPlaceUpdateState {
	t.Helper()
	raw, ok := p.Annotations[appspub.InPlaceUpdateStateKey]
	if !ok {
		return nil
	}
	s := &appspub.InPlaceUpdateState{}
	if err := json.Unmarshal([]byte(raw), s); err != nil {
		t.Fatalf("pod %s: %s: %v", p.Name, appspub.InPlaceUpdateStateKey, err)
	}
	return s
}

// TestInPlaceUpdateChangesContainersInLaunchPriorityOrder checks that an in-place update of a
// sidecar with a higher launch priority and of the app changes the sidecar's image first, and
// the app's only once the sidecar's new container runs and is ready; the state annotation
// records the app's image as waiting, then both batches, and the pod is updated and ready only
// after the last batch.
func TestInPlaceUpdateChangesContainersInLaunchPriorityOrder(t *testing.T) {
	ns := newNamespace(t)
	create(t, prioritizedCloneSet(ns))
	waitSettled(t, ns, "web", 1, settle)
	before := framework.MustLivePods(t, env.Client, ns, "web")[0]
	oldSidecarID := framework.ContainerStatus(&before, "sidecar").ImageID
	versions := watchPodVersions(t, ns)

	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) {
		cs.Spec.Template.Spec.Containers[0].Image = imageV2
		cs.Spec.Template.Spec.Containers[1].Image = sidecarV2
	})
	waitSettledAt(t, ns, "web", 1, imageV2, settle)

	after := framework.MustLivePods(t, env.Client, ns, "web")[0]
	if after.UID != before.UID {
		t.Fatalf("pod was recreated; the update is in place")
	}
	sawSidecarFirst := false
	for _, p := range versions.all() {
		if p.UID != before.UID {
			continue
		}
		side := framework.ContainerStatus(&p, "sidecar")
		if specImage(&p, "main") == imageV2 {
			if specImage(&p, "sidecar") != sidecarV2 || side == nil || side.ImageID == oldSidecarID || !side.Ready {
				t.Fatalf("pod version %s changed the app's image before the sidecar's new container ran and was ready: sidecar spec %s, status %+v",
					p.ResourceVersion, specImage(&p, "sidecar"), side)
			}
			continue
		}
		if specImage(&p, "sidecar") != sidecarV2 {
			continue
		}
		sawSidecarFirst = true
		if got := framework.PodCondition(&p, appspub.InPlaceUpdateReady); got == corev1.ConditionTrue {
			t.Errorf("pod version %s: InPlaceUpdateReady True while the app still waits for its batch", p.ResourceVersion)
		}
		if s := updateState(t, &p); s == nil || s.NextContainerImages["main"] != imageV2 ||
			s.PreCheckBeforeNext == nil || !cmp.Equal(s.PreCheckBeforeNext.ContainersRequiredReady, []string{"sidecar"}) {
			t.Errorf("pod version %s: state %+v, want the app's image waiting behind the sidecar", p.ResourceVersion, s)
		}
	}
	if !sawSidecarFirst {
		t.Errorf("no pod version had the sidecar's new image and the app's old one: both changed in one write")
	}

	s := updateState(t, &after)
	if s == nil {
		t.Fatalf("no %s annotation", appspub.InPlaceUpdateStateKey)
	}
	var batches [][]string
	for _, b := range s.ContainerBatchesRecord {
		batches = append(batches, b.Containers)
	}
	if diff := cmp.Diff([][]string{{"sidecar"}, {"main"}}, batches); diff != "" {
		t.Errorf("containerBatchesRecord (-want +got):\n%s", diff)
	}
	if len(s.NextContainerImages) != 0 || s.PreCheckBeforeNext != nil || !s.UpdateImages {
		t.Errorf("finished state %+v: nothing waits, no check before a next batch, updateImages true", s)
	}
	for _, c := range []string{"main", "sidecar"} {
		if rc := framework.ContainerStatus(&after, c).RestartCount; rc != 1 {
			t.Errorf("container %s: restartCount %d, want 1", c, rc)
		}
	}
	if got := framework.PodCondition(&after, appspub.InPlaceUpdateReady); got != corev1.ConditionTrue {
		t.Errorf("InPlaceUpdateReady %q after the last batch, want True", got)
	}
}

// TestInPlaceUpdateLeavesTheAppAloneWhenTheHigherPrioritySidecarFails checks that when the
// sidecar's new image cannot be pulled, the app container, of lower launch priority, is never
// changed: its image stays, it keeps running, and its image waits in the state annotation.
func TestInPlaceUpdateLeavesTheAppAloneWhenTheHigherPrioritySidecarFails(t *testing.T) {
	ns := newNamespace(t)
	create(t, prioritizedCloneSet(ns))
	waitSettled(t, ns, "web", 1, settle)
	before := framework.MustLivePods(t, env.Client, ns, "web")[0]
	versions := watchPodVersions(t, ns)
	broken := "registry.example.com/sidecar:" + framework.UnpullableTag

	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) {
		cs.Spec.Template.Spec.Containers[0].Image = imageV2
		cs.Spec.Template.Spec.Containers[1].Image = broken
	})
	framework.Eventually(t, framework.Medium, "the sidecar waits on its unpullable image and the CloneSet counts the pod updated, not ready", func(ctx context.Context) error {
		p := framework.MustLivePods(t, env.Client, ns, "web")[0]
		side := framework.ContainerStatus(&p, "sidecar")
		if side == nil || side.State.Waiting == nil || side.Ready {
			return fmt.Errorf("sidecar status %+v", side)
		}
		cs := getCloneSet(t, ns, "web")
		return framework.Want(cs.Status.ObservedGeneration == cs.Generation && cs.Status.UpdatedReplicas == 1 && cs.Status.ReadyReplicas == 0 && cs.Status.UpdatedReadyReplicas == 0,
			fmt.Sprintf("status %+v", cs.Status))
	})
	framework.Consistently(t, framework.Medium, "the app container keeps its image and keeps running", func(ctx context.Context) error {
		p := framework.MustLivePods(t, env.Client, ns, "web")[0]
		main := framework.ContainerStatus(&p, "main")
		if specImage(&p, "main") != imageV1 || main == nil || main.RestartCount != 0 {
			return fmt.Errorf("app spec image %s, status %+v", specImage(&p, "main"), main)
		}
		if s := updateState(t, &p); s == nil || s.NextContainerImages["main"] != imageV2 {
			return fmt.Errorf("state %+v, want the app's image waiting", s)
		}
		return nil
	})
	for _, p := range versions.all() {
		if p.UID == before.UID && specImage(&p, "main") != imageV1 {
			t.Errorf("pod version %s changed the app's image to %s", p.ResourceVersion, specImage(&p, "main"))
		}
	}
}
