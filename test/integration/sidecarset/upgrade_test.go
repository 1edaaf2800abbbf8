package sidecarset

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// listPods returns the namespace's pods by name.
func listPods(ctx context.Context, ns string) (map[string]*corev1.Pod, error) {
	var list corev1.PodList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := map[string]*corev1.Pod{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out, nil
}

// sidecarRunning tells a pod whose sidecar container runs the image its spec asks for and is
// ready.
func sidecarRunning(p *corev1.Pod, name string) bool {
	c, cs := container(p, name), framework.ContainerStatus(p, name)
	return c != nil && cs != nil && cs.Image == c.Image && cs.Ready
}

// waitSidecarImage waits until every named pod runs image in its sidecar container.
func waitSidecarImage(t *testing.T, ns, sidecar, image string, names ...string) {
	t.Helper()
	framework.Eventually(t, framework.Medium, "sidecars on "+image, func(ctx context.Context) error {
		pods, err := listPods(ctx, ns)
		if err != nil {
			return err
		}
		for _, n := range names {
			p := pods[n]
			if p == nil || container(p, sidecar).Image != image || !sidecarRunning(p, sidecar) {
				return fmt.Errorf("pod %s sidecar not running %s", n, image)
			}
		}
		return nil
	})
}

// waitStatus waits until the SidecarSet's status satisfies ok.
func waitStatus(t *testing.T, name, what string, ok func(appsv1alpha1.SidecarSetStatus) bool) {
	t.Helper()
	framework.Eventually(t, framework.Medium, what, func(ctx context.Context) error {
		s, err := getSidecarSet(ctx, name)
		if err != nil {
			return err
		}
		return framework.Want(s.Status.ObservedGeneration == s.Generation && ok(s.Status), "status "+toJSON(s.Status))
	})
}

// e2e: "sidecarSet upgrade cold sidecar container image only"
func TestSidecarSetUpgradeColdSidecarContainerImageOnly(t *testing.T) {
	ns := newNamespace(t)
	names := createWithPods(t, agentSet("cold-log", ns), ns, 2)
	before, err := listPods(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	updateSidecarSet(t, "cold-log", func(s *appsv1alpha1.SidecarSet) { s.Spec.Containers[0].Image = "agent:2" })
	waitSidecarImage(t, ns, "agent", "agent:2", names...)
	waitStatus(t, "cold-log", "both pods updated and ready", func(st appsv1alpha1.SidecarSetStatus) bool {
		return st.MatchedPods == 2 && st.UpdatedPods == 2 && st.UpdatedReadyPods == 2 && st.ReadyPods == 2
	})
	after, err := listPods(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, a := before[n], after[n]
		if a.UID != b.UID {
			t.Errorf("pod %s was recreated", n)
		}
		if framework.ContainerStatus(a, "agent").RestartCount <= framework.ContainerStatus(b, "agent").RestartCount {
			t.Errorf("pod %s sidecar restartCount %d, want more than %d", n, framework.ContainerStatus(a, "agent").RestartCount, framework.ContainerStatus(b, "agent").RestartCount)
		}
		if rc := framework.ContainerStatus(a, "main").RestartCount; rc != 0 || container(a, "main").Image != "app:1" {
			t.Errorf("pod %s app container restarted %d times, image %s; a sidecar update must not touch it", n, rc, container(a, "main").Image)
		}
	}
}

// e2e: "sidecarSet upgrade sidecar container (more than image field), no pod should be updated"
func TestSidecarSetUpgradeMoreThanImageNoPodUpdated(t *testing.T) {
	ns := newNamespace(t)
	createSidecarSet(t, agentSet("more-log", ns))
	names := createPods(t, ns, 2)
	waitStatus(t, "more-log", "two pods updated", func(st appsv1alpha1.SidecarSetStatus) bool { return st.UpdatedPods == 2 })
	updateSidecarSet(t, "more-log", func(s *appsv1alpha1.SidecarSet) {
		s.Spec.Containers[0].Image = "agent:2"
		s.Spec.Containers[0].Command = []string{"agent", "--verbose"}
	})
	waitStatus(t, "more-log", "no pod counted updated", func(st appsv1alpha1.SidecarSetStatus) bool {
		return st.MatchedPods == 2 && st.UpdatedPods == 0
	})
	framework.Eventually(t, framework.Medium, "pods marked not upgradable", func(ctx context.Context) error {
		pods, err := listPods(ctx, ns)
		if err != nil {
			return err
		}
		for _, n := range names {
			c := upgradableCondition(pods[n])
			if c == nil || c.Status != corev1.ConditionFalse || c.Reason != "UpdateImmutableField" {
				return fmt.Errorf("pod %s condition %+v", n, c)
			}
		}
		return nil
	})
	framework.Consistently(t, 3*time.Second, "no pod updated", func(ctx context.Context) error {
		pods, err := listPods(ctx, ns)
		if err != nil {
			return err
		}
		for _, n := range names {
			if img := container(pods[n], "agent").Image; img != "agent:1" {
				return fmt.Errorf("pod %s sidecar image %s", n, img)
			}
		}
		return nil
	})
}

// e2e: "sidecarSet upgrade sidecar container image, and paused"
func TestSidecarSetUpgradeSidecarContainerImageAndPaused(t *testing.T) {
	ns := newNamespace(t)
	createSidecarSet(t, agentSet("paused-log", ns))
	names := createPods(t, ns, 2)
	updateSidecarSet(t, "paused-log", func(s *appsv1alpha1.SidecarSet) {
		s.Spec.UpdateStrategy.Paused = true
		s.Spec.Containers[0].Image = "agent:2"
	})
	waitStatus(t, "paused-log", "two pods matched, none updated", func(st appsv1alpha1.SidecarSetStatus) bool {
		return st.MatchedPods == 2 && st.UpdatedPods == 0
	})
	framework.Consistently(t, 2*time.Second, "paused: no pod updated", func(ctx context.Context) error {
		s, err := getSidecarSet(ctx, "paused-log")
		if err != nil {
			return err
		}
		return framework.Want(s.Status.UpdatedPods == 0, "status "+toJSON(s.Status))
	})
	updateSidecarSet(t, "paused-log", func(s *appsv1alpha1.SidecarSet) { s.Spec.UpdateStrategy.Paused = false })
	waitSidecarImage(t, ns, "agent", "agent:2", names...)
}

// e2e: "sidecarSet upgrade sidecar container image, and selector"
func TestSidecarSetUpgradeSidecarContainerImageAndSelector(t *testing.T) {
	ns := newNamespace(t)
	createSidecarSet(t, agentSet("selector-log", ns))
	canary := webPod("canary", ns)
	canary.Labels["canary"] = "true"
	framework.Create(t, env.Client, canary)
	framework.Create(t, env.Client, webPod("stable", ns))
	waitReady(t, ns, "canary", "stable")
	updateSidecarSet(t, "selector-log", func(s *appsv1alpha1.SidecarSet) {
		s.Spec.UpdateStrategy.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}
		s.Spec.Containers[0].Image = "agent:2"
	})
	waitSidecarImage(t, ns, "agent", "agent:2", "canary")
	waitStatus(t, "selector-log", "one pod updated", func(st appsv1alpha1.SidecarSetStatus) bool {
		return st.MatchedPods == 2 && st.UpdatedPods == 1
	})
	if img := container(getPod(t, ns, "stable"), "agent").Image; img != "agent:1" {
		t.Errorf("the pod the update selector skips got %s", img)
	}
}

// e2e: "sidecarSet upgrade sidecar container image, and partition"
func TestSidecarSetUpgradeSidecarContainerImageAndPartition(t *testing.T) {
	ns := newNamespace(t)
	createSidecarSet(t, agentSet("partition-log", ns))
	createPods(t, ns, 3)
	updateSidecarSet(t, "partition-log", func(s *appsv1alpha1.SidecarSet) {
		s.Spec.UpdateStrategy.Partition = ptr.To(intstr.FromInt32(1))
		s.Spec.Containers[0].Image = "agent:2"
	})
	waitStatus(t, "partition-log", "two of three pods updated", func(st appsv1alpha1.SidecarSetStatus) bool {
		return st.MatchedPods == 3 && st.UpdatedPods == 2 && st.UpdatedReadyPods == 2
	})
	framework.Consistently(t, 2*time.Second, "the partition holds one pod back", func(ctx context.Context) error {
		s, err := getSidecarSet(ctx, "partition-log")
		if err != nil {
			return err
		}
		return framework.Want(s.Status.UpdatedPods == 2, "status "+toJSON(s.Status))
	})
}

// e2e: "sidecarSet upgrade sidecar container image, and maxUnavailable". A sampler reads the
// pods all through the rollout and records the most whose sidecar was unavailable at once.
func TestSidecarSetUpgradeSidecarContainerImageAndMaxUnavailable(t *testing.T) {
	ns := newNamespace(t)
	s := agentSet("maxun-log", ns)
	s.Spec.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(2))
	createSidecarSet(t, s)
	names := createPods(t, ns, 5)
	waitStatus(t, "maxun-log", "five pods ready", func(st appsv1alpha1.SidecarSetStatus) bool { return st.ReadyPods == 5 })
	before, err := listPods(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}

	// Looks run one after the other, so peak needs no lock; stop orders them before the read.
	peak := 0
	stop := sampleDuring(ns, func(pods map[string]*corev1.Pod) {
		n := 0
		for _, p := range pods {
			if !sidecarRunning(p, "agent") || !framework.PodReady(p) {
				n++
			}
		}
		peak = max(peak, n)
	})
	updateSidecarSet(t, "maxun-log", func(s *appsv1alpha1.SidecarSet) { s.Spec.Containers[0].Image = "agent:2" })
	waitSidecarImage(t, ns, "agent", "agent:2", names...)
	waitStatus(t, "maxun-log", "all updated and ready", func(st appsv1alpha1.SidecarSetStatus) bool {
		return st.UpdatedReadyPods == 5
	})
	samples := stop()
	t.Logf("%d samples, at most %d pods unavailable at once", samples, peak)
	if peak > 2 {
		t.Errorf("%d pods were unavailable at once; maxUnavailable is 2", peak)
	}
	if peak == 0 {
		t.Errorf("no sample saw a pod mid-update; the sampler missed the rollout")
	}
	after, err := listPods(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if after[n].UID != before[n].UID || framework.ContainerStatus(after[n], "main").RestartCount != 0 {
			t.Errorf("pod %s: recreated or app container restarted", n)
		}
	}
}

// e2e: "sidecarSet history revision checker" and "... data checker"
func TestSidecarSetHistoryRevisionChecker(t *testing.T) {
	ns := newNamespace(t)
	s := agentSet("history-log", ns)
	s.Spec.RevisionHistoryLimit = ptr.To[int32](2)
	createSidecarSet(t, s)
	for i := 2; i <= 5; i++ {
		image := fmt.Sprintf("agent:%d", i)
		updateSidecarSet(t, "history-log", func(s *appsv1alpha1.SidecarSet) { s.Spec.Containers[0].Image = image })
		waitStatus(t, "history-log", "revision of "+image, func(st appsv1alpha1.SidecarSetStatus) bool {
			rev, err := revisionData(st.LatestRevision)
			return err == nil && rev == image
		})
	}
	framework.Eventually(t, framework.Medium, "history trimmed to the limit", func(ctx context.Context) error {
		revs, err := revisionsOf(ctx, "history-log")
		if err != nil {
			return err
		}
		return framework.Want(len(revs) == 2, fmt.Sprintf("%d revisions", len(revs)))
	})
}

// e2e: "sidecarSet InjectionStrategy.Revision checker"
func TestSidecarSetInjectionStrategyRevisionChecker(t *testing.T) {
	ns := newNamespace(t)
	first := createWithRevision(t, agentSet("pinned-log", ns))
	updateSidecarSet(t, "pinned-log", func(s *appsv1alpha1.SidecarSet) {
		s.Spec.Containers[0].Image = "agent:2"
		s.Spec.UpdateStrategy.Paused = true
		s.Spec.InjectionStrategy.Revision = &appsv1alpha1.SidecarSetInjectRevision{RevisionName: ptr.To(first), Policy: appsv1alpha1.AlwaysSidecarSetInjectRevisionPolicy}
	})
	waitStatus(t, "pinned-log", "second revision", func(st appsv1alpha1.SidecarSetStatus) bool { return st.LatestRevision != first })
	framework.Create(t, env.Client, webPod("pinned", ns))
	got := getPod(t, ns, "pinned")
	if img := container(got, "agent").Image; img != "agent:1" {
		t.Errorf("pinned revision: sidecar image %s, want agent:1", img)
	}
	specs, err := inject.ReadUpgradeSpecs(got, appsv1alpha1.SidecarSetHashAnnotation)
	if err != nil {
		t.Fatal(err)
	}
	if specs["pinned-log"].ControllerRevision != first {
		t.Errorf("pod records revision %q, want the pinned %q", specs["pinned-log"].ControllerRevision, first)
	}
}

// revisionsOf lists a SidecarSet's ControllerRevisions in the manager's namespace.
func revisionsOf(ctx context.Context, name string) ([]appsv1.ControllerRevision, error) {
	var list appsv1.ControllerRevisionList
	err := env.Client.List(ctx, &list, client.InNamespace(harness.ManagerNamespace), client.MatchingLabels{inject.RevisionNameLabel: name})
	return list.Items, err
}

// revisionData returns the first container image a revision holds.
func revisionData(name string) (string, error) {
	var rev appsv1.ControllerRevision
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: harness.ManagerNamespace, Name: name}, &rev); err != nil {
		return "", err
	}
	var s appsv1alpha1.SidecarSet
	restored, err := inject.Restore(&s, &rev)
	if err != nil || len(restored.Spec.Containers) == 0 {
		return "", fmt.Errorf("revision %s: %v", name, err)
	}
	return restored.Spec.Containers[0].Image, nil
}

// upgradableCondition is the pod's SidecarSetUpgradable condition, or nil.
func upgradableCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == appsv1alpha1.SidecarSetUpgradable {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// TestSidecarSetUpgradableWrittenOnlyWhere18WritesIt checks the SidecarSet controller writes a
// pod's SidecarSetUpgradable condition only where 1.8 does: a pod created with the latest
// sidecars of two SidecarSets gets no condition and no status write from the controller, even
// when both SidecarSets are reconciled again; once one SidecarSet updates the pod's sidecar in
// place, the condition holds that SidecarSet's entry, true, and only it.
func TestSidecarSetUpgradableWrittenOnlyWhere18WritesIt(t *testing.T) {
	ns := newNamespace(t)
	sets := []string{"cond-agent", "cond-proxy"}
	createSidecarSet(t, agentSet(sets[0], ns))
	createSidecarSet(t, sidecarSetIn(sets[1], ns, corev1.Container{Name: "proxy", Image: "proxy:1"}))
	createPods(t, ns, 1)
	for _, name := range sets {
		waitStatus(t, name, "the pod matched, updated and ready", func(st appsv1alpha1.SidecarSetStatus) bool {
			return st.MatchedPods == 1 && st.UpdatedPods == 1 && st.ReadyPods == 1
		})
	}
	created := getPod(t, ns, "web-0")
	if c := upgradableCondition(created); c != nil {
		t.Fatalf("a pod created with the latest sidecars got a SidecarSetUpgradable condition: %+v", *c)
	}

	// A custom version label reconciles each SidecarSet again without changing its sidecars;
	// its revision carries the label once the pass has run.
	for _, name := range sets {
		updateSidecarSet(t, name, func(s *appsv1alpha1.SidecarSet) {
			if s.Labels == nil {
				s.Labels = map[string]string{}
			}
			s.Labels[appsv1alpha1.SidecarSetCustomVersionLabel] = "v2"
		})
		waitStatus(t, name, "the custom version on the latest revision", func(st appsv1alpha1.SidecarSetStatus) bool {
			var rev appsv1.ControllerRevision
			key := types.NamespacedName{Namespace: harness.ManagerNamespace, Name: st.LatestRevision}
			err := env.Client.Get(context.Background(), key, &rev)
			return err == nil && rev.Labels[appsv1alpha1.SidecarSetCustomVersionLabel] == "v2"
		})
	}
	framework.Consistently(t, 2*time.Second, "no status write to a pod on the latest sidecars", func(ctx context.Context) error {
		pods, err := listPods(ctx, ns)
		if err != nil {
			return err
		}
		p := pods["web-0"]
		if c := upgradableCondition(p); c != nil {
			return fmt.Errorf("condition %+v", *c)
		}
		return framework.Want(p.ResourceVersion == created.ResourceVersion,
			fmt.Sprintf("resourceVersion %s, was %s", p.ResourceVersion, created.ResourceVersion))
	})

	updateSidecarSet(t, sets[0], func(s *appsv1alpha1.SidecarSet) { s.Spec.Containers[0].Image = "agent:2" })
	waitSidecarImage(t, ns, "agent", "agent:2", "web-0")
	framework.Eventually(t, framework.Medium, "the updating SidecarSet's entry true", func(ctx context.Context) error {
		pods, err := listPods(ctx, ns)
		if err != nil {
			return err
		}
		c := upgradableCondition(pods["web-0"])
		want := `{"cond-agent":true}`
		return framework.Want(c != nil && c.Status == corev1.ConditionTrue && c.Reason == "AllSidecarsetUpgradable" && c.Message == want,
			fmt.Sprintf("condition %+v, want True AllSidecarsetUpgradable %s", c, want))
	})
}
