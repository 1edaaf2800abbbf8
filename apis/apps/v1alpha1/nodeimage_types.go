package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeImageSpec is the desired state of a NodeImage: the images its node should have.
type NodeImageSpec struct {
	// Images maps an image name without tag (e.g. "registry.example.com/library/nginx") to the tags of it
	// to pull on this node. At most 256 images per node.
	// +kubebuilder:validation:MaxProperties=256
	// +kubebuilder:validation:XValidation:rule="self.all(name, size(name) > 0)",message="spec.images keys (image names) must not be empty"
	// +optional
	Images map[string]ImageSpec `json:"images,omitempty"`
}

// ImageSpec says how to pull the tags of one image.
type ImageSpec struct {
	// PullSecrets reference the Secrets, by namespace and name, whose registry credentials are
	// used for the pull.
	// +optional
	PullSecrets []ReferenceObject `json:"pullSecrets,omitempty"`

	// Tags are the tags of the image to pull, each once.
	// +listType=map
	// +listMapKey=tag
	// +required
	Tags []ImageTagSpec `json:"tags"`

	// SandboxConfig is metadata handed to the container runtime with the pull request, for
	// runtimes that need a sandbox context to pull.
	// +optional
	SandboxConfig *SandboxConfig `json:"sandboxConfig,omitempty"`
}

// ReferenceObject points to a namespaced object, rendered as "<namespace>/<name>".
type ReferenceObject struct {
	// Namespace of the object.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name of the object.
	// +optional
	Name string `json:"name,omitempty"`
}

// ImageTagSpec says how to pull one tag of an image.
type ImageTagSpec struct {
	// Tag is the tag (or digest) to pull.
	// +kubebuilder:validation:MinLength=1
	// +required
	Tag string `json:"tag"`

	// CreatedAt is when this tag was asked for (RFC 3339, UTC); the controller fills it in when
	// it is missing.
	// +optional
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`

	// PullPolicy tunes the pull of this tag. ttlSecondsAfterFinished must be set.
	// +required
	PullPolicy *ImageTagPullPolicy `json:"pullPolicy,omitempty"`

	// OwnerReferences are the objects (typically ImagePullJobs) that asked for this tag; the
	// tag is dropped once none of them is left.
	// +optional
	OwnerReferences []corev1.ObjectReference `json:"ownerReferences,omitempty"`

	// Version is an opaque, non-negative counter bumped by the system whenever the tag's spec
	// changes, so that the node agent can tell which spec its status answers. Read-only.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Version int64 `json:"version,omitempty"`

	// ImagePullPolicy is Always or IfNotPresent. Unset behaves as IfNotPresent.
	// +optional
	ImagePullPolicy ImagePullPolicy `json:"imagePullPolicy,omitempty"`
}

// ImageTagPullPolicy tunes the pull of one tag on the node.
type ImageTagPullPolicy struct {
	// TimeoutSeconds is how long, in seconds, one pull attempt may take. Defaults to 600.
	// +kubebuilder:default=600
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`

	// BackoffLimit is how many times a failed pull is retried before the tag is marked failed.
	// Defaults to 3.
	// +kubebuilder:default=3
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// TTLSecondsAfterFinished is how long, in seconds, the tag stays in the spec after its pull
	// finished (either way); 0 removes it at once.
	// +required
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// ActiveDeadlineSeconds is how long, in seconds from its start, the pull may run before it
	// is stopped and marked failed. Unset means no deadline.
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
}

// NodeImageStatus is the observed state of a NodeImage, written by the node agent.
type NodeImageStatus struct {
	// Desired is the number of tags to pull, over all images of the spec.
	// +optional
	Desired int32 `json:"desired"`

	// Succeeded is the number of tags pulled.
	// +optional
	Succeeded int32 `json:"succeeded"`

	// Failed is the number of tags whose pull failed.
	// +optional
	Failed int32 `json:"failed"`

	// Pulling is the number of tags being pulled now.
	// +optional
	Pulling int32 `json:"pulling"`

	// Waiting is the number of tags whose pull has not started yet.
	// +optional
	Waiting int32 `json:"waiting,omitempty"`

	// ImageStatuses maps an image name to the pull state of its tags.
	// +optional
	ImageStatuses map[string]ImageStatus `json:"imageStatuses,omitempty"`

	// FirstSyncStatus records when all pulls first finished on this node after it joined, so
	// that other systems can wait for a new node to be warm.
	// +optional
	FirstSyncStatus *SyncStatus `json:"firstSyncStatus,omitempty"`
}

// ImageStatus is the pull state of the tags of one image.
type ImageStatus struct {
	// Tags hold one state per tag.
	// +required
	Tags []ImageTagStatus `json:"tags"`
}

// ImageTagStatus is the pull state of one tag.
type ImageTagStatus struct {
	// Tag is the tag (or digest).
	// +required
	Tag string `json:"tag"`

	// Phase is Waiting, Pulling, Succeeded or Failed.
	// +required
	Phase ImagePullPhase `json:"phase"`

	// Progress is the pull's progress in percent, 0 to 100. It can go back when a pull is retried.
	// +optional
	Progress int32 `json:"progress,omitempty"`

	// StartTime is when the node agent started the pull (RFC 3339, UTC).
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the pull finished (RFC 3339, UTC).
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Version is the spec version of the tag this state answers.
	// +optional
	Version int64 `json:"version,omitempty"`

	// ImageID is the runtime's ID of the pulled image.
	// +optional
	ImageID string `json:"imageID,omitempty"`

	// Message explains the state, mostly why the pull failed.
	// +optional
	Message string `json:"message,omitempty"`
}

// ImagePullPhase is the phase of one pull on a node.
type ImagePullPhase string

const (
	// ImagePhaseWaiting: the pull has not started.
	ImagePhaseWaiting ImagePullPhase = "Waiting"
	// ImagePhasePulling: the pull is running.
	ImagePhasePulling ImagePullPhase = "Pulling"
	// ImagePhaseSucceeded: the image is on the node.
	ImagePhaseSucceeded ImagePullPhase = "Succeeded"
	// ImagePhaseFailed: the pull failed for good.
	ImagePhaseFailed ImagePullPhase = "Failed"
)

// SyncStatus summarises the pulls on a node at one moment.
type SyncStatus struct {
	// SyncAt is when the summary was taken (RFC 3339, UTC).
	// +optional
	SyncAt metav1.Time `json:"syncAt,omitempty"`

	// Status is Succeeded when every pull succeeded and Failed otherwise.
	// +optional
	Status SyncStatusPhase `json:"status,omitempty"`

	// Message explains the status.
	// +optional
	Message string `json:"message,omitempty"`
}

// SyncStatusPhase is the outcome of the pulls on a node.
type SyncStatusPhase string

const (
	// SyncStatusSucceeded: every pull on the node succeeded.
	SyncStatusSucceeded SyncStatusPhase = "Succeeded"
	// SyncStatusFailed: at least one pull on the node failed.
	SyncStatusFailed SyncStatusPhase = "Failed"
)

// NodeImage lists the images one node should have; there is one per node, named after it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="DESIRED",type="integer",JSONPath=".status.desired",description="Number of image tags to pull on this node."
// +kubebuilder:printcolumn:name="PULLING",type="integer",JSONPath=".status.pulling",description="Number of pulls running now."
// +kubebuilder:printcolumn:name="SUCCEED",type="integer",JSONPath=".status.succeeded",description="Number of pulls that succeeded."
// +kubebuilder:printcolumn:name="FAILED",type="integer",JSONPath=".status.failed",description="Number of pulls that failed."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the object was created."
type NodeImage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec NodeImageSpec `json:"spec,omitempty"`

	// Status is the observed state, written by the node agent.
	// +optional
	Status NodeImageStatus `json:"status,omitempty"`
}

// NodeImageList is a list of NodeImages.
//
// +kubebuilder:object:root=true
type NodeImageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the NodeImages.
	Items []NodeImage `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NodeImage{}, &NodeImageList{})
}
