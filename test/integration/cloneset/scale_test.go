package cloneset

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func TestScaleUpAndDown(t *testing.T) {
	for _, minReady := range []int32{0, 2} {
		t.Run(fmt.Sprintf("minReadySeconds=%d", minReady), func(t *testing.T) {
			ns := newNamespace(t)
			create(t, kinds.CloneSet("web", ns).Replicas(3).MinReadySeconds(minReady).Obj())
			var availableAt time.Time
			framework.Eventually(t, settle, "three available replicas", func(ctx context.Context) error {
				if cs := getCloneSet(t, ns, "web"); cs.Status.AvailableReplicas != 3 {
					return fmt.Errorf("status %+v", cs.Status)
				}
				availableAt = time.Now()
				return nil
			})
			cs := waitSettled(t, ns, "web", 3, settle)

			pods := framework.MustLivePods(t, env.Client, ns, "web")
			for _, p := range pods {
				id := p.Labels[appsv1alpha1.CloneSetInstanceID]
				if want := "web-" + id; p.Name != want || len(id) != 5 {
					t.Errorf("pod %s: want its name to be the CloneSet name and a 5-character instance ID, got id %q", p.Name, id)
				}
				if got := p.Labels["controller-revision-hash"]; got != cs.Status.UpdateRevision {
					t.Errorf("pod %s: controller-revision-hash %q, want %q", p.Name, got, cs.Status.UpdateRevision)
				}
				if !strings.HasSuffix(cs.Status.UpdateRevision, p.Labels["pod-template-hash"]) {
					t.Errorf("pod %s: pod-template-hash %q is not the short form of %q", p.Name, p.Labels["pod-template-hash"], cs.Status.UpdateRevision)
				}
			}
			if minReady > 0 {
				// Available only minReadySeconds after ready: the status must not have counted
				// a pod available before that (condition times have one-second precision).
				latestReady := time.Time{}
				for _, p := range pods {
					for _, c := range p.Status.Conditions {
						if c.Type == corev1.PodReady && c.LastTransitionTime.After(latestReady) {
							latestReady = c.LastTransitionTime.Time
						}
					}
				}
				if earliest := latestReady.Add(time.Duration(minReady-1) * time.Second); availableAt.Before(earliest) {
					t.Errorf("availableReplicas reached 3 at %s, before the last pod (ready %s) was ready for %ds", availableAt, latestReady, minReady)
				}
			}
			if diff := cmp.Diff(fmt.Sprintf("app=%s", "web"), cs.Status.LabelSelector); diff != "" {
				t.Errorf("status.labelSelector (-want +got):\n%s", diff)
			}

			change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](5) })
			waitSettled(t, ns, "web", 5, settle)
			change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](1) })
			waitSettled(t, ns, "web", 1, settle)
		})
	}
}

func TestPausedKeepsPodsReady(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("web", ns).Replicas(3).Paused(true).Obj())
	before := waitSettled(t, ns, "web", 3, settle)
	oldPods := framework.MustLivePods(t, env.Client, ns, "web")

	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) {
		cs.Spec.Template.Spec.Containers[0].Image = "registry.example.com/web:2"
	})
	framework.Eventually(t, settle, "the controller sees the new template", func(ctx context.Context) error {
		cs := getCloneSet(t, ns, "web")
		if cs.Status.ObservedGeneration != cs.Generation || cs.Status.UpdateRevision == before.Status.UpdateRevision {
			return fmt.Errorf("status %+v", cs.Status)
		}
		return nil
	})
	cs := getCloneSet(t, ns, "web")
	if cs.Status.UpdatedReplicas != 0 || cs.Status.ReadyReplicas != 3 {
		t.Fatalf("paused CloneSet: updatedReplicas %d (want 0), readyReplicas %d (want 3)", cs.Status.UpdatedReplicas, cs.Status.ReadyReplicas)
	}
	// Scaling still works while paused, with the update revision for new pods.
	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](4) })
	framework.WaitForPods(t, env.Client, ns, "web", settle, "a fourth pod while paused", func(pods []corev1.Pod) error {
		if len(pods) != 4 {
			return fmt.Errorf("%d pods", len(pods))
		}
		return nil
	})
	for _, p := range framework.MustLivePods(t, env.Client, ns, "web") {
		for _, o := range oldPods {
			if o.Name == p.Name && (o.UID != p.UID || p.Spec.Containers[0].Image != o.Spec.Containers[0].Image) {
				t.Errorf("pod %s changed while the CloneSet was paused", p.Name)
			}
		}
	}
	change(t, ns, "web", func(cs *appsv1alpha1.CloneSet) { cs.Spec.UpdateStrategy.Paused = false })
	waitSettled(t, ns, "web", 4, rollout)
}
