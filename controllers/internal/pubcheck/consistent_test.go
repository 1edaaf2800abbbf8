package pubcheck

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// sidecarPod is a Ready pod with app container "main" (app:1, image ID app-id) and injected
// sidecar "agent" whose spec asks for specImage while its status reports statusImage with
// statusID; upgradeState is its kruise.io/sidecarset-inplace-update-state ("" for none).
func sidecarPod(specImage, statusImage, statusID, upgradeState string) *corev1.Pod {
	p := readyPod("a").Image("app:1").Container("agent", specImage).
		Annotation(appsv1alpha1.SidecarSetListAnnotation, "log").Obj()
	p.Spec.Containers[1].Env = []corev1.EnvVar{{Name: appsv1alpha1.SidecarEnvKey, Value: "true"}}
	if upgradeState != "" {
		p.Annotations[appsv1alpha1.SidecarsetInplaceUpdateStateKey] = upgradeState
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{
		{Name: "main", Image: "app:1", ImageID: "app-id", Ready: true},
		{Name: "agent", Image: statusImage, ImageID: statusID, Ready: true},
	}
	return p
}

func TestConsistent(t *testing.T) {
	upgraded := `{"log":{"revision":"2","lastContainerStatuses":{"agent":{"imageID":"agent-1-id"}}}}`
	digestPod := func(imageID string) *corev1.Pod {
		p := readyPod("a").Image("example.com/app@" + digest).Obj()
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", ImageID: imageID, Ready: true}}
		return p
	}
	tests := map[string]struct {
		pod  *corev1.Pod
		want bool
	}{
		"a pod no in-place update touched is consistent": {
			pod: sidecarPod("agent:1", "agent:1", "agent-1-id", ""), want: true,
		},
		"a sidecar upgraded in place that still reports its old image and image ID is not": {
			pod: sidecarPod("agent:2", "agent:1", "agent-1-id", upgraded), want: false,
		},
		"a sidecar upgraded in place that reports its new image with a new image ID is": {
			pod: sidecarPod("agent:2", "agent:2", "agent-2-id", upgraded), want: true,
		},
		"a sidecar upgraded to another tag of the same image ID that reports the new tag is": {
			pod: sidecarPod("agent:2", "agent:2", "agent-1-id", upgraded), want: true,
		},
		"the upgrade record of a SidecarSet the pod does not list is not looked at": {
			pod: sidecarPod("agent:2", "agent:1", "agent-1-id", `{"other":{"lastContainerStatuses":{"agent":{"imageID":"agent-1-id"}}}}`), want: true,
		},
		"an upgrade record that does not parse reads as not taken effect": {
			pod: sidecarPod("agent:1", "agent:1", "agent-1-id", `{`), want: false,
		},
		"an upgrade record that does not parse on a pod with no injected sidecar is not looked at, as in 1.8": {
			pod: func() *corev1.Pod {
				p := sidecarPod("agent:1", "agent:1", "agent-1-id", `{`)
				p.Spec.Containers[1].Env = nil
				return p
			}(), want: true,
		},
		"a pod in the grace period of an in-place update is not, even with no update state recorded": {
			pod: func() *corev1.Pod {
				p := sidecarPod("agent:1", "agent:1", "agent-1-id", "")
				p.Annotations[appspub.InPlaceUpdateGraceKey] = `{"revision":"2"}`
				return p
			}(), want: false,
		},
		"a digest image whose container reports that digest is consistent": {
			pod: digestPod("docker-pullable://example.com/app@" + digest), want: true,
		},
		"a digest image whose container reports another image ID is not": {
			pod: digestPod("example.com/app@sha256:" + "ff" + digest[9:]), want: false,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Consistent(tc.pod); got != tc.want {
				t.Errorf("Consistent = %v, want %v", got, tc.want)
			}
		})
	}
}
