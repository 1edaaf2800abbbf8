package statefulset

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

func imageOf(p *corev1.Pod) string { return p.Spec.Containers[0].Image }

// waitImages waits until every live pod of the set runs image.
func waitImages(t *testing.T, ns, name, image string, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	framework.Eventually(t, rollout, fmt.Sprintf("the %d pods of %s run %s", n, name, image), func(ctx context.Context) error {
		var err error
		if pods, err = listPods(ctx, ns, name, false); err != nil {
			return err
		}
		if len(pods) != n {
			return fmt.Errorf("%d pods", len(pods))
		}
		for i := range pods {
			if imageOf(&pods[i]) != image || !framework.PodReady(&pods[i]) {
				return fmt.Errorf("pod %s runs %s, ready %v", pods[i].Name, imageOf(&pods[i]), framework.PodReady(&pods[i]))
			}
		}
		return nil
	})
	return pods
}

func TestShouldPerformRollingUpdatesAndRollBacksOfTemplateModifications(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, newSet("ss", ns, 3))
	first := waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1", "ss-2")
	before := framework.PodUIDs(framework.MustLivePods(t, env.Client, ns, "ss"))

	s := sample(ns, "ss", 3)
	deletions := watchDeletions(t, ns, "ss")
	change(t, ns, "ss", setImage(imageV2))
	second := waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1", "ss-2")
	maxUnavailable, _, samples := s.finish()
	t.Logf("rollout: %d samples, at most %d pods unavailable", samples, maxUnavailable)
	if maxUnavailable > 1 {
		t.Errorf("%d pods were unavailable at once; an OrderedReady rolling update takes one at a time", maxUnavailable)
	}
	if got := deletions.names(); fmt.Sprint(got) != "[ss-2 ss-1 ss-0]" {
		t.Errorf("pods were recreated in order %v; want from the highest ordinal down", got)
	}
	for _, p := range framework.MustLivePods(t, env.Client, ns, "ss") {
		if p.UID == before[p.Name] || imageOf(&p) != imageV2 || p.Labels[appsv1.ControllerRevisionHashLabelKey] != second.Status.UpdateRevision {
			t.Errorf("pod %s was not recreated at the update revision", p.Name)
		}
	}
	if second.Status.UpdateRevision == first.Status.UpdateRevision {
		t.Fatalf("the template change made no new revision")
	}

	// Rolling back re-applies the old template, which reuses its revision.
	change(t, ns, "ss", setImage(imageV1))
	third := waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1", "ss-2")
	if third.Status.UpdateRevision != first.Status.UpdateRevision {
		t.Errorf("rollback revision %s, want the first revision %s again", third.Status.UpdateRevision, first.Status.UpdateRevision)
	}
	waitImages(t, ns, "ss", imageV1, 3)
}

func TestShouldPerformCanaryUpdatesAndPhasedRollingUpdatesOfTemplateModifications(t *testing.T) {
	ns := newNamespace(t)
	createSettled(t, newSet("ss", ns, 3, rolling(func(ru *appsv1beta1.RollingUpdateStatefulSetStrategy) { ru.Partition = ptr.To[int32](3) })), "ss-0", "ss-1", "ss-2")

	change(t, ns, "ss", setImage(imageV2))
	keepImage(t, ns, "ss", imageV1, 0, "a partition of 3 keeps every pod at the old image")
	// Canary: partition 2 updates only ss-2.
	change(t, ns, "ss", rolling(func(ru *appsv1beta1.RollingUpdateStatefulSetStrategy) { ru.Partition = ptr.To[int32](2) }))
	framework.Eventually(t, rollout, "only ss-2 runs the new image", func(ctx context.Context) error {
		pods, err := listPods(ctx, ns, "ss", false)
		if err != nil {
			return err
		}
		got := map[string]string{}
		for i := range pods {
			if framework.PodReady(&pods[i]) {
				got[pods[i].Name] = imageOf(&pods[i])
			}
		}
		return framework.Want(fmt.Sprint(got) == fmt.Sprint(map[string]string{"ss-0": imageV1, "ss-1": imageV1, "ss-2": imageV2}), fmt.Sprint(got))
	})
	set := mustGetSet(t, ns, "ss")
	if set.Status.UpdatedReplicas != 1 || set.Status.CurrentReplicas != 2 {
		t.Errorf("status: updatedReplicas %d, currentReplicas %d; want 1 and 2", set.Status.UpdatedReplicas, set.Status.CurrentReplicas)
	}
	// A deleted pod below the partition comes back at the current revision.
	deleteAndWaitBack(t, framework.MustLivePods(t, env.Client, ns, "ss")[0], "ss-0 comes back at the old image", func(p *corev1.Pod) error {
		return framework.Want(framework.PodReady(p) && imageOf(p) == imageV1, fmt.Sprintf("ss-0 runs %s", imageOf(p)))
	})
	// Phased: partition 0 finishes the rollout.
	change(t, ns, "ss", rolling(func(ru *appsv1beta1.RollingUpdateStatefulSetStrategy) { ru.Partition = ptr.To[int32](0) }))
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1", "ss-2")
	waitImages(t, ns, "ss", imageV2, 3)
}

func TestShouldImplementLegacyReplacementWhenTheUpdateStrategyIsOnDelete(t *testing.T) {
	ns := newNamespace(t)
	set := newSet("ss", ns, 2)
	set.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType
	framework.Create(t, env.Client, set)
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1")
	change(t, ns, "ss", setImage(imageV2))
	keepImage(t, ns, "ss", imageV1, 2, "OnDelete keeps every pod")
	for _, p := range framework.MustLivePods(t, env.Client, ns, "ss") {
		framework.Delete(t, env.Client, &p)
	}
	waitImages(t, ns, "ss", imageV2, 2)
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1")
}

func TestShouldInPlaceUpdatePodsWhenThePodUpdateStrategyIsInPlace(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, newSet("ss", ns, 3, parallel, inPlace(appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType),
		rolling(func(ru *appsv1beta1.RollingUpdateStatefulSetStrategy) {
			ru.MaxUnavailable = ptr.To(intstr.FromInt32(2))
		})))
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1", "ss-2")
	before := framework.MustLivePods(t, env.Client, ns, "ss")

	s := sample(ns, "ss", 3)
	change(t, ns, "ss", setImage(imageV2))
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1", "ss-2")
	after := waitImages(t, ns, "ss", imageV2, 3)
	maxUnavailable, maxTotal, samples := s.finish()
	t.Logf("in-place rollout: %d samples, at most %d unavailable, at most %d pods", samples, maxUnavailable, maxTotal)
	if maxUnavailable > 2 || maxTotal > 3 {
		t.Errorf("at most %d unavailable and %d pods; maxUnavailable is 2 and an in-place update adds no pod", maxUnavailable, maxTotal)
	}
	for i, p := range after {
		b := before[i]
		var restarts int32
		if len(p.Status.ContainerStatuses) > 0 {
			restarts = p.Status.ContainerStatuses[0].RestartCount
		}
		if p.UID != b.UID || p.Status.PodIP != b.Status.PodIP || restarts != 1 {
			t.Errorf("pod %s: uid %s→%s, ip %s→%s, restarts %d; an in-place update keeps the pod and restarts its container once", p.Name, b.UID, p.UID, b.Status.PodIP, p.Status.PodIP, restarts)
		}
		if framework.PodCondition(&p, appspub.InPlaceUpdateReady) != corev1.ConditionTrue {
			t.Errorf("pod %s: InPlaceUpdateReady is %q after the update", p.Name, framework.PodCondition(&p, appspub.InPlaceUpdateReady))
		}
	}
}

func TestShouldRecreateUpdateWhenTheChangeCannotGoInPlace(t *testing.T) {
	ns := newNamespace(t)
	createSettled(t, newSet("ss", ns, 2, inPlace(appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType)), "ss-0", "ss-1")
	before := framework.PodUIDs(framework.MustLivePods(t, env.Client, ns, "ss"))
	// A resource change cannot go in place: InPlaceIfPossible recreates the pods.
	change(t, ns, "ss", withEnv("MODE", "new"))
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1")
	for _, p := range framework.MustLivePods(t, env.Client, ns, "ss") {
		if p.UID == before[p.Name] {
			t.Errorf("pod %s kept its UID; a change that cannot go in place recreates it", p.Name)
		}
	}
}

func TestInPlaceOnlyChangeThatCannotGoInPlaceSetsFailedUpdatePodAndKeepsThePods(t *testing.T) {
	ns := newNamespace(t)
	createSettled(t, newSet("ss", ns, 2, inPlace(appsv1beta1.InPlaceOnlyPodUpdateStrategyType)), "ss-0", "ss-1")
	before := framework.PodUIDs(framework.MustLivePods(t, env.Client, ns, "ss"))
	change(t, ns, "ss", withEnv("MODE", "new"))
	waitSet(t, ns, "ss", framework.Medium, "FailedUpdatePod is set", func(set *appsv1beta1.StatefulSet) error {
		for _, c := range set.Status.Conditions {
			if c.Type == appsv1beta1.FailedUpdatePod && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v", set.Status.Conditions)
	})
	framework.Consistently(t, framework.Short/2, "no pod is deleted", func(ctx context.Context) error {
		pods, err := listPods(ctx, ns, "ss", true)
		if err != nil {
			return err
		}
		return framework.Want(fmt.Sprint(framework.PodUIDs(pods)) == fmt.Sprint(before), fmt.Sprint(framework.PodUIDs(pods)))
	})
}

func TestShouldPerformRollingUpdatesWithSpecifiedDeleted(t *testing.T) {
	ns := newNamespace(t)
	createSettled(t, newSet("ss", ns, 3, parallel), "ss-0", "ss-1", "ss-2")
	before := framework.PodUIDs(framework.MustLivePods(t, env.Client, ns, "ss"))
	patchPodLabel(t, ns, "ss-1", appsv1alpha1.SpecifiedDeleteKey, "true")
	framework.Eventually(t, rollout, "ss-1 is deleted and made again", func(ctx context.Context) error {
		pods, err := listPods(ctx, ns, "ss", false)
		if err != nil {
			return err
		}
		got := framework.PodUIDs(pods)
		return framework.Want(len(pods) == 3 && got["ss-1"] != before["ss-1"] && got["ss-0"] == before["ss-0"] && got["ss-2"] == before["ss-2"],
			fmt.Sprintf("pods %v", got))
	})
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1", "ss-2")
	p := &corev1.Pod{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "ss-1"}, p); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Labels[appsv1alpha1.SpecifiedDeleteKey]; ok {
		t.Errorf("the new ss-1 carries %s", appsv1alpha1.SpecifiedDeleteKey)
	}
}

func TestMinReadySecondsShouldBeHonoredWhenEnabled(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, newSet("ss", ns, 1, rolling(func(ru *appsv1beta1.RollingUpdateStatefulSetStrategy) { ru.MinReadySeconds = ptr.To[int32](3) })))
	waitSet(t, ns, "ss", rollout, "ss-0 is ready but not yet available", func(set *appsv1beta1.StatefulSet) error {
		return framework.Want(set.Status.ReadyReplicas == 1 && set.Status.AvailableReplicas == 0, fmt.Sprintf("status %+v", set.Status))
	})
	// AvailableReplicas gets updated once the pod has been ready for minReadySeconds.
	waitSettled(t, ns, "ss", rollout, "ss-0")
}

func TestArgoCDReadsHealthyProgressingAndSuspended(t *testing.T) {
	ns := newNamespace(t)
	createSettled(t, newSet("ss", ns, 2), "ss-0", "ss-1")
	health := func(want string) {
		t.Helper()
		framework.Eventually(t, framework.Medium, "Argo CD reads "+want, func(ctx context.Context) error {
			got, err := argoHealth(ctx, ns, "ss")
			if err != nil {
				return err
			}
			return framework.Want(got == want, got)
		})
	}
	health("Healthy")

	// Paused with a pending template: Suspended.
	change(t, ns, "ss", func(s *appsv1beta1.StatefulSet) {
		s.Spec.UpdateStrategy.RollingUpdate.Paused = true
		s.Spec.Template.Spec.Containers[0].Image = imageV2
	})
	health("Suspended")

	// Unpaused, the rollout makes progress and ends Healthy. Argo CD's check reads Progressing
	// only while status.observedGeneration lags; once the controller has seen the spec, a rollout
	// still under way reads Degraded (updatedAvailableReplicas below replicas), as with 1.8.
	readings := map[string]bool{}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if got, err := argoHealth(context.Background(), ns, "ss"); err == nil {
				readings[got] = true
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	change(t, ns, "ss", func(s *appsv1beta1.StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Paused = false })
	waitSettled(t, ns, "ss", rollout, "ss-0", "ss-1")
	close(stop)
	<-done
	t.Logf("Argo CD readings during the rollout: %v", readings)
	health("Healthy")
	if readings["Suspended"] && !readings["Degraded"] && !readings["Progressing"] {
		t.Errorf("the rollout read only Suspended; want it seen as under way")
	}
}

func TestInPlaceUpdateStrategyGracePeriodSecondsDelaysTheImageChange(t *testing.T) {
	ns := newNamespace(t)
	framework.Create(t, env.Client, newSet("ss", ns, 1, inPlace(appsv1beta1.InPlaceIfPossiblePodUpdateStrategyType),
		rolling(func(ru *appsv1beta1.RollingUpdateStatefulSetStrategy) {
			ru.InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{GracePeriodSeconds: 3}
		})))
	waitSettled(t, ns, "ss", rollout, "ss-0")
	change(t, ns, "ss", setImage(imageV2))
	framework.Eventually(t, framework.Medium, "ss-0 is taken out of service before its image changes", func(ctx context.Context) error {
		p, err := getPod(ctx, ns, "ss-0")
		if err != nil {
			return err
		}
		_, waiting := p.Annotations[appspub.InPlaceUpdateGraceKey]
		return framework.Want(waiting && imageOf(p) == imageV1 && framework.PodCondition(p, appspub.InPlaceUpdateReady) == corev1.ConditionFalse,
			fmt.Sprintf("grace annotation %v, image %s, InPlaceUpdateReady %s", waiting, imageOf(p), framework.PodCondition(p, appspub.InPlaceUpdateReady)))
	})
	pods := waitImages(t, ns, "ss", imageV2, 1)
	if _, waiting := pods[0].Annotations[appspub.InPlaceUpdateGraceKey]; waiting {
		t.Errorf("the grace annotation stays after the update")
	}
}

// keepImage checks for a while that every live pod of set name runs image and, unless n is 0,
// that there are n of them.
func keepImage(t *testing.T, ns, name, image string, n int, what string) {
	t.Helper()
	framework.Consistently(t, framework.Short/2, what, func(ctx context.Context) error {
		pods, err := listPods(ctx, ns, name, false)
		if err != nil {
			return err
		}
		for i := range pods {
			if imageOf(&pods[i]) != image {
				return fmt.Errorf("pod %s runs %s", pods[i].Name, imageOf(&pods[i]))
			}
		}
		return framework.Want(n == 0 || len(pods) == n, fmt.Sprint(names(pods)))
	})
}
