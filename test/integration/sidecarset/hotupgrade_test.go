package sidecarset

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// e2e: "sidecarSet upgrade hot sidecar container image". A sampler checks that one container
// of the pair serves (ready on a real image) at every look, and that the app container never
// restarts.
func TestSidecarSetUpgradeHotSidecarContainerImage(t *testing.T) {
	ns := newNamespace(t)
	names := createHotUpgrade(t, "hot-upgrade-mesh", ns, 2)

	serving := func(p *corev1.Pod) bool {
		for _, n := range []string{"envoy-1", "envoy-2"} {
			c, cs := container(p, n), framework.ContainerStatus(p, n)
			if c != nil && cs != nil && cs.Image != "empty:1" && cs.Ready && cs.State.Running != nil {
				return true
			}
		}
		return false
	}
	var gaps []string
	looked := 0
	stop := sampleDuring(ns, func(pods map[string]*corev1.Pod) {
		looked++
		for _, n := range names {
			if p := pods[n]; p != nil && !serving(p) {
				gaps = append(gaps, fmt.Sprintf("%s at sample %d", n, looked))
			}
		}
	})

	updateSidecarSet(t, "hot-upgrade-mesh", func(s *appsv1alpha1.SidecarSet) { s.Spec.Containers[0].Image = "envoy:2" })
	framework.Eventually(t, framework.Medium, "envoy-2 serves envoy:2 and envoy-1 is back on the empty image", func(ctx context.Context) error {
		pods, err := listPods(ctx, ns)
		if err != nil {
			return err
		}
		for _, n := range names {
			p := pods[n]
			if !sidecarRunning(p, "envoy-2") || container(p, "envoy-2").Image != "envoy:2" ||
				!sidecarRunning(p, "envoy-1") || container(p, "envoy-1").Image != "empty:1" ||
				p.Annotations[appsv1alpha1.SidecarSetWorkingHotUpgradeContainer] != `{"envoy":"envoy-2"}` {
				return fmt.Errorf("pod %s: envoy-1 %s, envoy-2 %s, working %s", n, container(p, "envoy-1").Image, container(p, "envoy-2").Image,
					p.Annotations[appsv1alpha1.SidecarSetWorkingHotUpgradeContainer])
			}
		}
		return nil
	})
	waitStatus(t, "hot-upgrade-mesh", "both pods updated and ready", func(st appsv1alpha1.SidecarSetStatus) bool {
		return st.UpdatedPods == 2 && st.UpdatedReadyPods == 2
	})
	t.Logf("%d samples", stop())
	if len(gaps) > 0 {
		t.Errorf("no container of the pair served at %d looks, first: %v", len(gaps), gaps[0])
	}
	after, err := listPods(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		p := after[n]
		if rc := framework.ContainerStatus(p, "main").RestartCount; rc != 0 {
			t.Errorf("pod %s app container restarted %d times", n, rc)
		}
		if rc := framework.ContainerStatus(p, "envoy-2").RestartCount; rc != 1 {
			t.Errorf("pod %s envoy-2 restarted %d times, want once (empty to envoy:2)", n, rc)
		}
	}
}

// TestSidecarSetHotUpgradeResetIsReportedOnThePod: as in 1.8, once a hot upgrade has set the old
// container of the pair back to the empty image, the pod gets a Normal event
// ResetContainerSucceed, so `kubectl describe pod` shows the step.
func TestSidecarSetHotUpgradeResetIsReportedOnThePod(t *testing.T) {
	ns := newNamespace(t)
	names := createHotUpgrade(t, "hot-upgrade-events", ns, 1)
	updateSidecarSet(t, "hot-upgrade-events", func(s *appsv1alpha1.SidecarSet) { s.Spec.Containers[0].Image = "envoy:2" })
	framework.WaitForEvent(t, env.Client, ns, framework.Medium, "the pod has a ResetContainerSucceed event", func(e *corev1.Event) bool {
		return e.InvolvedObject.Kind == "Pod" && e.InvolvedObject.Name == names[0] && e.Reason == "ResetContainerSucceed" && e.Type == corev1.EventTypeNormal
	})
}
