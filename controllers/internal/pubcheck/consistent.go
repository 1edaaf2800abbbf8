package pubcheck

import (
	"encoding/json"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
)

// Consistent reports whether a pod's container statuses show the containers its spec asks for,
// as 1.8 requires of an available pod:
//   - a container whose image names a digest reports that repository and digest in its image ID;
//     when every container's image does, nothing else is looked at;
//   - otherwise every sidecar that an in-place SidecarSet upgrade changed
//     (kruise.io/sidecarset-inplace-update-state of the SidecarSets the pod lists) runs its new
//     image, the pod is not in the grace period of an in-place update
//     (apps.kruise.io/inplace-update-grace, whether or not a state is recorded), and the
//     workload's in-place update, if it records one, has completed.
//
// A pod whose spec was updated but whose kubelet still reports the old container (say while
// the old container takes its grace period to stop) is therefore not available.
func Consistent(pod *corev1.Pod) bool {
	allDigests := true
	ids := map[string]string{}
	for _, cs := range pod.Status.ContainerStatuses {
		ids[cs.Name] = cs.ImageID
	}
	for _, c := range pod.Spec.Containers {
		want, err := name.NewDigest(c.Image, name.WeakValidation)
		if err != nil {
			allDigests = false
			continue
		}
		if !runsDigest(want, ids[c.Name]) {
			return false
		}
	}
	if allDigests {
		return true
	}
	if !sidecarsUpdated(pod) {
		return false
	}
	if _, grace := pod.Annotations[appspub.InPlaceUpdateGraceKey]; grace {
		return false
	}
	state, err := inplaceupdate.State(pod)
	if err != nil {
		return false
	}
	return state == nil || inplaceupdate.Completed(pod, state)
}

// runsDigest tells an image ID (with or without a runtime's scheme, e.g. docker-pullable://)
// that names want's repository and digest.
func runsDigest(want name.Digest, imageID string) bool {
	if i := strings.Index(imageID, "://"); i >= 0 {
		imageID = imageID[i+3:]
	}
	got, err := name.NewDigest(imageID, name.WeakValidation)
	return err == nil && got.Context().Name() == want.Context().Name() && got.DigestStr() == want.DigestStr()
}

// sidecarsUpdated tells whether every injected sidecar (a container with IS_INJECTED=true) that
// the in-place upgrade of a SidecarSet the pod lists in kruise.io/sidecarset-injected-list
// changed runs its new image, judged by what the upgrade recorded in
// kruise.io/sidecarset-inplace-update-state. A record that does not parse reads as an upgrade
// that has not taken effect; as in 1.8 it is not read at all for a pod that lists no SidecarSet
// or carries no injected sidecar.
func sidecarsUpdated(pod *corev1.Pod) bool {
	raw, recorded := pod.Annotations[appsv1alpha1.SidecarsetInplaceUpdateStateKey]
	sets := pod.Annotations[appsv1alpha1.SidecarSetListAnnotation]
	if !recorded || sets == "" {
		return true
	}
	sidecars := map[string]bool{}
	for _, c := range pod.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == appsv1alpha1.SidecarEnvKey && e.Value == "true" {
				sidecars[c.Name] = true
			}
		}
	}
	if len(sidecars) == 0 {
		return true
	}
	all := map[string]*appspub.InPlaceUpdateState{}
	if err := json.Unmarshal([]byte(raw), &all); err != nil {
		return false
	}
	changed := &appspub.InPlaceUpdateState{LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{}}
	for _, set := range strings.Split(sets, ",") {
		s := all[strings.TrimSpace(set)]
		if s == nil {
			continue
		}
		for c, last := range s.LastContainerStatuses {
			if sidecars[c] {
				changed.LastContainerStatuses[c] = last
			}
		}
	}
	return len(changed.LastContainerStatuses) == 0 || inplaceupdate.Completed(pod, changed)
}
