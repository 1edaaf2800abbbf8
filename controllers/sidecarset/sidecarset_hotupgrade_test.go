package sidecarset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcontainer"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
)

// hotSet is a SidecarSet "mesh" whose envoy sidecar is hot upgraded, now at envoy:2.
func hotSet() *appsv1alpha1.SidecarSet {
	s := testSet()
	s.Name, s.ResourceVersion = "mesh", "42"
	s.Spec.Containers = []appsv1alpha1.SidecarContainer{{Container: corev1.Container{Name: "envoy", Image: "envoy:2"},
		UpgradeStrategy: appsv1alpha1.SidecarContainerUpgradeStrategy{UpgradeType: appsv1alpha1.SidecarContainerHotUpgrade, HotUpgradeEmptyImage: "empty:1"}}}
	return s
}

// hotPod is a pod as injected from envoy:1: envoy-1 serves, envoy-2 idles; all ready.
func hotPod(t *testing.T) *corev1.Pod {
	t.Helper()
	s := hotSet()
	s.Spec.Containers[0].Image = "envoy:1"
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "app:1"}}}}
	if _, err := inject.Inject(p, []*appsv1alpha1.SidecarSet{s}, metav1.NewTime(t0)); err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: "id-" + c.Image, Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}})
	}
	return p
}

func images(p *corev1.Pod) map[string]string {
	out := map[string]string{}
	for _, c := range p.Spec.Containers {
		out[c.Name] = c.Image
	}
	return out
}

// run makes the pod's containers run their spec images, as the kubelet would.
func run(p *corev1.Pod) {
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		img := podcontainer.Spec(p, cs.Name).Image
		if cs.Image != img {
			cs.Image, cs.ImageID, cs.RestartCount = img, "id-"+img, cs.RestartCount+1
		}
	}
}

func TestHotUpgradeSteps(t *testing.T) {
	s := hotSet()
	p := hotPod(t)

	// Step 1: the idle container gets the new image and becomes the working one.
	if err := updateSidecars(p, s, metav1.NewTime(t0)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"envoy-1": "envoy:1", "envoy-2": "envoy:2", "main": "app:1"}, images(p)); diff != "" {
		t.Errorf("step 1 images (-want +got):\n%s", diff)
	}
	if w, _ := pair(p, "envoy"); w != "envoy-2" {
		t.Errorf("working container %s after step 1, want envoy-2", w)
	}
	wantAnn := map[string]string{"version.sidecarset.kruise.io/envoy-2": "42", "versionalt.sidecarset.kruise.io/envoy-2": "1", "versionalt.sidecarset.kruise.io/envoy-1": "42"}
	for k, v := range wantAnn {
		if p.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, p.Annotations[k], v)
		}
	}

	// Step 2: until envoy-2 runs the new image, the old container is not reset.
	if due, waiting := pendingReset(s, p); len(due) != 0 || !waiting {
		t.Errorf("before the new container runs: due %v waiting %v; want none due and waiting", due, waiting)
	}
	if sidecarsSettled(s, p) {
		t.Error("settled before the new container runs")
	}
	run(p)
	due, waiting := pendingReset(s, p)
	if diff := cmp.Diff([]string{"envoy-1"}, due); diff != "" || waiting {
		t.Errorf("once the new container serves, the old one is due for reset (-want +got):\n%s waiting %v", diff, waiting)
	}
	if got := planUpdate(s, []*corev1.Pod{p}, t0); len(got.reset) != 1 {
		t.Errorf("the planner resets %d pods, want 1", len(got.reset))
	}

	// Step 3: the old container goes back to the empty image; the serving one is untouched.
	resetOldSidecars(s, p, due)
	if diff := cmp.Diff(map[string]string{"envoy-1": "empty:1", "envoy-2": "envoy:2", "main": "app:1"}, images(p)); diff != "" {
		t.Errorf("step 3 images (-want +got):\n%s", diff)
	}
	if p.Annotations["version.sidecarset.kruise.io/envoy-1"] != "0" || p.Annotations["versionalt.sidecarset.kruise.io/envoy-2"] != "0" {
		t.Errorf("version counters after reset: %v", p.Annotations)
	}
	run(p)
	if !sidecarsSettled(s, p) {
		t.Error("not settled once both containers run their images")
	}
	if cs := podcontainer.Status(p, "envoy-2"); cs.RestartCount != 1 {
		t.Errorf("the new serving container restarted %d times, want once (empty to new image)", cs.RestartCount)
	}

	// The next update goes to envoy-1, now the idle one.
	s.Spec.Containers[0].Image, s.ResourceVersion = "envoy:3", "43"
	if err := updateSidecars(p, s, metav1.NewTime(t0)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"envoy-1": "envoy:3", "envoy-2": "envoy:2", "main": "app:1"}, images(p)); diff != "" {
		t.Errorf("next update images (-want +got):\n%s", diff)
	}
}
