package cloneset

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

const (
	imageV1 = "registry.example.com/web:1"
	imageV2 = "registry.example.com/web:2"
)

type podID struct {
	uid types.UID
	ip  string
}

func identities(pods []corev1.Pod) map[string]podID {
	out := map[string]podID{}
	for _, p := range pods {
		out[p.Name] = podID{uid: p.UID, ip: p.Status.PodIP}
	}
	return out
}

func TestInPlaceImageUpdateKeepsThePod(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(3).Image(imageV1).UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).Obj())
	waitSettled(t, ns, "web", 3, settle)
	before := framework.MustLivePods(t, env.Client, ns, "web")
	ids := identities(before)
	oldImageID := map[string]string{}
	for _, p := range before {
		oldImageID[p.Name] = framework.ContainerStatus(&p, "main").ImageID
	}

	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = imageV2 })
	cs := waitSettledAt(t, ns, "web", 3, imageV2, settle)

	after := framework.MustLivePods(t, env.Client, ns, "web")
	for _, p := range after {
		id, ok := ids[p.Name]
		if !ok || id.uid != p.UID {
			t.Errorf("pod %s is new; an image change must keep the pod", p.Name)
			continue
		}
		cst := framework.ContainerStatus(&p, "main")
		if cst.RestartCount != 1 {
			t.Errorf("pod %s: restartCount %d, want 1", p.Name, cst.RestartCount)
		}
		if cst.ImageID == oldImageID[p.Name] {
			t.Errorf("pod %s: imageID did not change", p.Name)
		}
		if got := framework.PodCondition(&p, appspub.InPlaceUpdateReady); got != corev1.ConditionTrue {
			t.Errorf("pod %s: InPlaceUpdateReady %q, want True", p.Name, got)
		}
		if p.Labels["controller-revision-hash"] != cs.Status.UpdateRevision {
			t.Errorf("pod %s: revision %q, want %q", p.Name, p.Labels["controller-revision-hash"], cs.Status.UpdateRevision)
		}
		if _, ok := p.Annotations[appspub.InPlaceUpdateStateKey]; !ok {
			t.Errorf("pod %s: no %s annotation", p.Name, appspub.InPlaceUpdateStateKey)
		}
	}
	if cs.Status.CurrentRevision != cs.Status.UpdateRevision {
		t.Errorf("currentRevision %q, want the update revision %q once every pod is updated", cs.Status.CurrentRevision, cs.Status.UpdateRevision)
	}
}

func TestTwoContainersUpdatedInOneInPlaceStep(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(1).Image(imageV1).ContainerImage("side", "registry.example.com/side:1").UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).Obj())
	waitSettled(t, ns, "web", 1, settle)
	before := framework.MustLivePods(t, env.Client, ns, "web")[0]

	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) {
		cs.Spec.Template.Spec.Containers[0].Image = imageV2
		cs.Spec.Template.Spec.Containers[1].Image = "registry.example.com/side:2"
	})
	waitSettledAt(t, ns, "web", 1, imageV2, settle)
	after := framework.MustLivePods(t, env.Client, ns, "web")[0]
	if after.UID != before.UID {
		t.Fatalf("pod was recreated")
	}
	for _, c := range []string{"main", "side"} {
		if rc := framework.ContainerStatus(&after, c).RestartCount; rc != 1 {
			t.Errorf("container %s: restartCount %d, want 1 (both in one step, each restarted once)", c, rc)
		}
	}
	if got := after.Spec.Containers[1].Image; got != "registry.example.com/side:2" {
		t.Errorf("side image %q", got)
	}
}

func TestEnvOrCommandChangeRecreatesThePod(t *testing.T) {
	tests := map[string]func(cs *appsv1alpha1.CloneSet){
		"an env change": withEnv("MODE", "fast"),
		"a command change": func(cs *appsv1alpha1.CloneSet) {
			cs.Spec.Template.Spec.Containers[0].Command = []string{"/bin/server", "--fast"}
		},
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			ns := newNamespace(t)
			create(t, kinds.CloneSet("web", ns).Replicas(2).UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).Obj())
			waitSettled(t, ns, "web", 2, settle)
			ids := identities(framework.MustLivePods(t, env.Client, ns, "web"))
			change(t, ns, "web", mutate)
			framework.WaitForPods(t, env.Client, ns, "web", settle, "every pod replaced", func(pods []corev1.Pod) error {
				for _, p := range pods {
					if _, old := ids[p.Name]; old {
						return fmt.Errorf("pod %s still there", p.Name)
					}
				}
				return nil
			})
			waitSettled(t, ns, "web", 2, settle)
		})
	}
}

func TestPartitionPercentUpdatesExactlyTheRest(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(4).Image(imageV1).Partition(intstr.FromString("99%")).
		MaxUnavailable(intstr.FromInt32(4)).UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).Obj())
	waitSettled(t, ns, "web", 4, settle)
	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = imageV2 })
	framework.Eventually(t, settle, "one pod updated and ready", func(ctx context.Context) error {
		cs := getCloneSet(t, ns, "web")
		st := cs.Status
		if st.ObservedGeneration != cs.Generation || st.UpdatedReplicas != 1 || st.UpdatedReadyReplicas != 1 || st.ReadyReplicas != 4 {
			return fmt.Errorf("status %+v", st)
		}
		if st.ExpectedUpdatedReplicas != 1 {
			return fmt.Errorf("expectedUpdatedReplicas %d, want 1", st.ExpectedUpdatedReplicas)
		}
		return nil
	})
	images := map[string]int{}
	for _, p := range framework.MustLivePods(t, env.Client, ns, "web") {
		images[p.Spec.Containers[0].Image]++
	}
	if images[imageV2] != 1 || images[imageV1] != 3 {
		t.Fatalf("images %v, want exactly 1 pod at %s and 3 at %s", images, imageV2, imageV1)
	}
}

func TestRolloutHonoursMaxUnavailableAndMaxSurge(t *testing.T) {
	tests := map[string]struct {
		strategy       appsv1alpha1.CloneSetUpdateStrategyType
		maxUnavailable intstr.IntOrString
		maxSurge       intstr.IntOrString
		wantUnavail    int
		wantMaxTotal   int
	}{
		"in place, maxUnavailable 20%": {
			strategy: appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType, maxUnavailable: intstr.FromString("20%"), maxSurge: intstr.FromInt32(0),
			wantUnavail: 4, wantMaxTotal: 20,
		},
		"recreate, maxUnavailable 3, maxSurge 2": {
			strategy: appsv1alpha1.RecreateCloneSetUpdateStrategyType, maxUnavailable: intstr.FromInt32(3), maxSurge: intstr.FromInt32(2),
			wantUnavail: 3, wantMaxTotal: 22,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ns := newNamespace(t)
			create(t, kinds.CloneSet("web", ns).Replicas(20).Image(imageV1).UpdateType(tc.strategy).
				MaxUnavailable(tc.maxUnavailable).MaxSurge(tc.maxSurge).Obj())
			waitSettled(t, ns, "web", 20, rollout)

			s := sample(ns, "web", 20)
			change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = imageV2 })
			waitSettledAt(t, ns, "web", 20, imageV2, rollout)
			maxUnavail, maxTotal, samples := s.finish()
			t.Logf("%d samples: at most %d unavailable, at most %d pods", samples, maxUnavail, maxTotal)
			if maxUnavail > tc.wantUnavail {
				t.Errorf("%d pods unavailable at once, maxUnavailable allows %d", maxUnavail, tc.wantUnavail)
			}
			if maxTotal > tc.wantMaxTotal {
				t.Errorf("%d pods at once, replicas + maxSurge allow %d", maxTotal, tc.wantMaxTotal)
			}
			if maxUnavail == 0 {
				t.Errorf("no pod was ever seen unavailable: the sampler did not watch the rollout")
			}
			if tc.wantMaxTotal > 20 && maxTotal <= 20 {
				t.Errorf("never more than 20 pods: maxSurge was not used")
			}
		})
	}
}

func TestRollbackReusesThePreviousRevision(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(2).Image(imageV1).UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).Obj())
	first := waitSettled(t, ns, "web", 2, settle).Status.UpdateRevision

	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = imageV2 })
	second := waitSettledAt(t, ns, "web", 2, imageV2, settle).Status.UpdateRevision
	if second == first {
		t.Fatalf("a new template kept revision %s", first)
	}

	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = imageV1 })
	cs := waitSettledAt(t, ns, "web", 2, imageV1, settle)
	if cs.Status.UpdateRevision != first {
		t.Fatalf("rollback made revision %s, want the first revision %s reused", cs.Status.UpdateRevision, first)
	}
}

// waitSettledAt waits until the CloneSet settles with every pod running image in its first
// container.
func waitSettledAt(t *testing.T, ns, name string, replicas int32, image string, timeout time.Duration) *appsv1alpha1.CloneSet {
	t.Helper()
	framework.Eventually(t, timeout, fmt.Sprintf("every pod of %s runs %s", name, image), func(ctx context.Context) error {
		pods, err := framework.LivePods(ctx, env.Client, ns, name)
		if err != nil {
			return err
		}
		for _, p := range pods {
			if p.Spec.Containers[0].Image != image {
				return fmt.Errorf("pod %s runs %s", p.Name, p.Spec.Containers[0].Image)
			}
		}
		return nil
	})
	return waitSettled(t, ns, name, replicas, timeout)
}

// TestInPlaceUpdateToAnotherTagOfTheSameImageCompletes checks an in-place update to a tag that
// names the same image (the same image ID) completes once the container is recreated and the
// status shows the new tag: the pods become updated and ready again.
func TestInPlaceUpdateToAnotherTagOfTheSameImageCompletes(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(2).Image(imageV2).
		UpdateType(appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType).Obj())
	waitSettled(t, ns, "web", 2, settle)
	before := framework.MustLivePods(t, env.Client, ns, "web")

	alias := imageV2 + framework.AliasTagSuffix
	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Template.Spec.Containers[0].Image = alias })
	waitSettledAt(t, ns, "web", 2, alias, settle)
	after := framework.MustLivePods(t, env.Client, ns, "web")
	for i := range after {
		if after[i].UID != before[0].UID && after[i].UID != before[1].UID {
			t.Errorf("pod %s was recreated; the update is in place", after[i].Name)
		}
	}
}
