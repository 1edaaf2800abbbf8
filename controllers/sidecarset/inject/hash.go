package inject

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// Hash is the revision hash of a SidecarSet's sidecars, as 1.8 computes it: the SHA-256 of the
// JSON of spec.containers (plus spec.initContainers when one of them is a native sidecar, an
// init container with restartPolicy Always), hex encoded and then made safe for a label. The
// SidecarSet defaulting webhook stores it in the SidecarSet's kruise.io/sidecarset-hash
// annotation; pods record the hash they were injected or updated with.
func Hash(s *appsv1alpha1.SidecarSet) (string, error) {
	return hashOf(s.Spec.Containers, s.Spec.InitContainers)
}

// HashWithoutImage is Hash with every image blanked: two revisions with the same hash
// without image differ, if at all, only by images, which an in-place update can change.
func HashWithoutImage(s *appsv1alpha1.SidecarSet) (string, error) {
	blank := func(in []appsv1alpha1.SidecarContainer) []appsv1alpha1.SidecarContainer {
		out := make([]appsv1alpha1.SidecarContainer, len(in))
		for i := range in {
			in[i].DeepCopyInto(&out[i])
			out[i].Image = ""
		}
		return out
	}
	return hashOf(blank(s.Spec.Containers), blank(s.Spec.InitContainers))
}

func hashOf(containers, initContainers []appsv1alpha1.SidecarContainer) (string, error) {
	m := map[string]any{"containers": containers}
	for i := range initContainers {
		if IsNativeSidecar(&initContainers[i].Container) {
			m["initContainers"] = initContainers
			break
		}
	}
	data, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encode sidecars: %w", err)
	}
	return rand.SafeEncodeString(fmt.Sprintf("%x", sha256.Sum256(data))), nil
}

// IsNativeSidecar tells an init container that keeps running beside the app containers
// (restartPolicy Always) from one that runs to completion first.
func IsNativeSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}
