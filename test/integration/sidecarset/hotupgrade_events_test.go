package sidecarset

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// TestSidecarSetHotUpgradeResetIsReportedOnThePod: as in 1.8, once a hot upgrade has set the old
// container of the pair back to the empty image, the pod gets a Normal event
// ResetContainerSucceed, so `kubectl describe pod` shows the step.
func TestSidecarSetHotUpgradeResetIsReportedOnThePod(t *testing.T) {
	ns := newNamespace(t)
	s := sidecarSetIn("hot-upgrade-events", ns, corev1.Container{Name: "envoy", Image: "envoy:1"})
	s.Spec.Containers[0].UpgradeStrategy = appsv1alpha1.SidecarContainerUpgradeStrategy{UpgradeType: appsv1alpha1.SidecarContainerHotUpgrade, HotUpgradeEmptyImage: "empty:1"}
	createSidecarSet(t, s)
	names := createPods(t, ns, 1)
	waitStatus(t, "hot-upgrade-events", "the pod updated and ready", func(st appsv1alpha1.SidecarSetStatus) bool {
		return st.UpdatedReadyPods == 1
	})
	updateSidecarSet(t, "hot-upgrade-events", func(s *appsv1alpha1.SidecarSet) { s.Spec.Containers[0].Image = "envoy:2" })
	framework.Eventually(t, framework.Medium, "the pod has a ResetContainerSucceed event", func(ctx context.Context) error {
		events := &corev1.EventList{}
		if err := env.Client.List(ctx, events, client.InNamespace(ns)); err != nil {
			return err
		}
		var seen []string
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "Pod" && e.InvolvedObject.Name == names[0] {
				if e.Reason == "ResetContainerSucceed" && e.Type == corev1.EventTypeNormal {
					return nil
				}
				seen = append(seen, e.Reason)
			}
		}
		return fmt.Errorf("events of pod %s: %v", names[0], seen)
	})
}
