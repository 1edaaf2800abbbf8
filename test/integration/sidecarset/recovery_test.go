package sidecarset

import (
	"testing"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// TestSidecarSetRecoversFromAnUnpullableImage checks that after a SidecarSet's image is set to
// one no node can pull and then to a good one, every matched pod ends on the good image: the pod
// whose sidecar is stuck on the bad image is updated again (a sidecar that is not ready does
// not block its next update), and the other follows within maxUnavailable.
func TestSidecarSetRecoversFromAnUnpullableImage(t *testing.T) {
	ns := newNamespace(t)
	names := createWithPods(t, agentSet("recovering-log", ns), ns, 2)

	updateSidecarSet(t, "recovering-log", func(s *appsv1alpha1.SidecarSet) {
		s.Spec.Containers[0].Image = "agent:" + framework.UnpullableTag
	})
	waitStatus(t, "recovering-log", "one pod on the unpullable image, not ready, the other held back", func(st appsv1alpha1.SidecarSetStatus) bool {
		return st.MatchedPods == 2 && st.UpdatedPods == 1 && st.ReadyPods == 1 && st.UpdatedReadyPods == 0
	})

	updateSidecarSet(t, "recovering-log", func(s *appsv1alpha1.SidecarSet) { s.Spec.Containers[0].Image = "agent:2" })
	waitSidecarImage(t, ns, "agent", "agent:2", names...)
	waitStatus(t, "recovering-log", "both pods on the good image and ready", func(st appsv1alpha1.SidecarSetStatus) bool {
		return st.MatchedPods == 2 && st.UpdatedPods == 2 && st.UpdatedReadyPods == 2 && st.ReadyPods == 2
	})
}

// TestSidecarSetInPlaceUpgradeAppliesPatchPodMetadata checks an in-place sidecar upgrade also
// brings the pod's annotations to the SidecarSet's current patchPodMetadata, as injection does.
func TestSidecarSetInPlaceUpgradeAppliesPatchPodMetadata(t *testing.T) {
	ns := newNamespace(t)
	s := agentSet("meta-upgrade-log", ns)
	s.Spec.PatchPodMetadata = []appsv1alpha1.SidecarSetPatchPodMetadata{
		{Annotations: map[string]string{"example.com/agent-mode": "v1"}, PatchPolicy: appsv1alpha1.SidecarSetOverwritePatchPolicy},
	}
	createSidecarSet(t, s)
	names := createPods(t, ns, 1)
	if got := getPod(t, ns, names[0]).Annotations["example.com/agent-mode"]; got != "v1" {
		t.Fatalf("injected pod annotation %q, want v1", got)
	}
	updateSidecarSet(t, "meta-upgrade-log", func(s *appsv1alpha1.SidecarSet) {
		s.Spec.Containers[0].Image = "agent:2"
		s.Spec.PatchPodMetadata[0].Annotations["example.com/agent-mode"] = "v2"
	})
	waitSidecarImage(t, ns, "agent", "agent:2", names...)
	if got := getPod(t, ns, names[0]).Annotations["example.com/agent-mode"]; got != "v2" {
		t.Errorf("upgraded pod annotation %q, want v2", got)
	}
}
