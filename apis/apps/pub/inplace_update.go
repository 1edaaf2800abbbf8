package pub

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// InPlaceUpdateReady is the readiness gate a workload adds to pods it may update in place.
	// The controller sets the condition False before it touches the pod spec and True once the
	// kubelet reports the new containers, so the pod leaves Service endpoints for the duration.
	InPlaceUpdateReady corev1.PodConditionType = "InPlaceUpdateReady"

	// InPlaceUpdateStateKey is the pod annotation whose value is an InPlaceUpdateState in JSON.
	InPlaceUpdateStateKey = "apps.kruise.io/inplace-update-state"
	// InPlaceUpdateStateKeyOld is the unprefixed key written by releases before 1.0; it is still read.
	InPlaceUpdateStateKeyOld = "inplace-update-state"

	// InPlaceUpdateGraceKey is the pod annotation that holds the spec patch still to be applied
	// when an in-place update waits out gracePeriodSeconds.
	InPlaceUpdateGraceKey = "apps.kruise.io/inplace-update-grace"
	// InPlaceUpdateGraceKeyOld is the unprefixed key written by releases before 1.0; it is still read.
	InPlaceUpdateGraceKeyOld = "inplace-update-grace"

	// RuntimeContainerMetaKey is the pod annotation the node daemon writes: a
	// RuntimeContainerMetaSet in JSON describing the containers the runtime really runs.
	RuntimeContainerMetaKey = "apps.kruise.io/runtime-containers-meta"
)

// InPlaceUpdateState is what a controller records on a pod when it starts an in-place update,
// so that a later pass can tell whether the kubelet has finished it.
type InPlaceUpdateState struct {
	// Revision is the controller revision hash the pod is being moved to.
	// +required
	Revision string `json:"revision"`

	// UpdateTimestamp is when the in-place update started.
	// +required
	UpdateTimestamp metav1.Time `json:"updateTimestamp"`

	// LastContainerStatuses maps a container name to what it ran before the update; the update
	// is complete when every listed container reports something else.
	// +required
	LastContainerStatuses map[string]InPlaceUpdateContainerStatus `json:"lastContainerStatuses"`

	// UpdateEnvFromMetadata is true when env vars sourced from pod labels or annotations changed.
	// +optional
	UpdateEnvFromMetadata bool `json:"updateEnvFromMetadata,omitempty"`

	// UpdateResources is true when container resources are being resized in place.
	// +optional
	UpdateResources bool `json:"updateResources,omitempty"`

	// UpdateImages is true when the update changes container images.
	// +optional
	UpdateImages bool `json:"updateImages,omitempty"`

	// NextContainerImages holds images, by container name, that wait for a later batch because
	// of container launch priority: a batch is patched once the containers of the one before run
	// their new spec and are ready (PreCheckBeforeNext).
	// +optional
	NextContainerImages map[string]string `json:"nextContainerImages,omitempty"`

	// NextContainerRefMetadata holds the labels and annotations, by container name, that wait
	// for a later batch.
	// +optional
	NextContainerRefMetadata map[string]metav1.ObjectMeta `json:"nextContainerRefMetadata,omitempty"`

	// NextContainerResources holds resources, by container name, that wait for a later batch.
	// +optional
	NextContainerResources map[string]corev1.ResourceRequirements `json:"nextContainerResources,omitempty"`

	// PreCheckBeforeNext must pass before the next batch of containers is updated.
	// +optional
	PreCheckBeforeNext *InPlaceUpdatePreCheckBeforeNext `json:"preCheckBeforeNext,omitempty"`

	// ContainerBatchesRecord lists the batches already patched for this revision, oldest first.
	// +optional
	ContainerBatchesRecord []InPlaceUpdateContainerBatch `json:"containerBatchesRecord,omitempty"`
}

// InPlaceUpdatePreCheckBeforeNext is a gate between two batches of an in-place update.
type InPlaceUpdatePreCheckBeforeNext struct {
	// ContainersRequiredReady names the containers that must be ready before the next batch.
	// +optional
	ContainersRequiredReady []string `json:"containersRequiredReady,omitempty"`
}

// InPlaceUpdateContainerBatch records one batch of containers patched together.
type InPlaceUpdateContainerBatch struct {
	// Timestamp is when the batch was patched.
	// +required
	Timestamp metav1.Time `json:"timestamp"`
	// Containers names the containers in the batch.
	// +required
	Containers []string `json:"containers"`
}

// InPlaceUpdateContainerStatus is the part of a container's status that an in-place update
// must see change before it counts as done.
type InPlaceUpdateContainerStatus struct {
	// ImageID is the image digest the container ran before the update.
	// +optional
	ImageID string `json:"imageID,omitempty"`
}

// InPlaceUpdateStrategy tunes how an in-place update is carried out.
type InPlaceUpdateStrategy struct {
	// GracePeriodSeconds is how long, in seconds, the pod stays not-ready before its spec is
	// changed, so that load balancers can drain it. Default 0.
	// +optional
	// +kubebuilder:validation:Minimum=0
	GracePeriodSeconds int32 `json:"gracePeriodSeconds,omitempty"`
}

// RuntimeContainerMetaSet is the value of the RuntimeContainerMetaKey annotation.
type RuntimeContainerMetaSet struct {
	// Containers lists every container the runtime runs for the pod.
	// +required
	Containers []RuntimeContainerMeta `json:"containers"`
}

// RuntimeContainerMeta describes one container as the runtime sees it.
type RuntimeContainerMeta struct {
	// Name is the container's name in the pod spec.
	// +required
	Name string `json:"name"`
	// ContainerID is the runtime's ID, in the form <runtime>://<id>.
	// +required
	ContainerID string `json:"containerID"`
	// RestartCount is the runtime's restart attempt for this container.
	// +required
	RestartCount int32 `json:"restartCount"`
	// Hashes identify the container spec the runtime container was created from.
	// +required
	Hashes RuntimeContainerHashes `json:"hashes"`
}

// RuntimeContainerHashes identify the pod-spec container a runtime container was created from.
type RuntimeContainerHashes struct {
	// PlainHash is the kubelet's hash of the container spec.
	// +required
	PlainHash uint64 `json:"plainHash"`
	// PlainHashWithoutResources is the kubelet's hash with resources zeroed.
	// +required
	PlainHashWithoutResources uint64 `json:"plainHashWithoutResources"`
	// ExtractedEnvFromMetadataHash is the hash after env vars from pod metadata were resolved.
	// +optional
	ExtractedEnvFromMetadataHash uint64 `json:"extractedEnvFromMetadataHash,omitempty"`
}

// GetInPlaceUpdateState returns the in-place update state annotation, reading the old key too.
func GetInPlaceUpdateState(obj metav1.Object) (string, bool) {
	return annotationWithFallback(obj, InPlaceUpdateStateKey, InPlaceUpdateStateKeyOld)
}

// GetInPlaceUpdateGrace returns the in-place update grace annotation, reading the old key too.
func GetInPlaceUpdateGrace(obj metav1.Object) (string, bool) {
	return annotationWithFallback(obj, InPlaceUpdateGraceKey, InPlaceUpdateGraceKeyOld)
}

func annotationWithFallback(obj metav1.Object, key, old string) (string, bool) {
	a := obj.GetAnnotations()
	if v, ok := a[key]; ok {
		return v, true
	}
	v, ok := a[old]
	return v, ok
}
