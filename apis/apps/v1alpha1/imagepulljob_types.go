package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Annotations on a workload (CloneSet, Advanced StatefulSet, ...) that tune the ImagePullJobs it
// creates to pre-download the images of a new revision on the nodes of its pods.
const (
	// ImagePreDownloadParallelismKey sets the parallelism of the pre-download jobs, an integer.
	ImagePreDownloadParallelismKey = "apps.kruise.io/image-predownload-parallelism"

	// ImagePreDownloadTimeoutSecondsKey sets the pull timeout, in seconds, of the pre-download jobs.
	ImagePreDownloadTimeoutSecondsKey = "apps.kruise.io/image-predownload-timeout-seconds"

	// ImagePreDownloadMinUpdatedReadyPods is how many pods of the new revision must be updated
	// and ready before the pre-download jobs are created, an integer.
	ImagePreDownloadMinUpdatedReadyPods = "apps.kruise.io/image-predownload-min-updated-ready-pods"
)

// ImagePullPolicy says whether the node agent pulls an image that is already on the node.
// +kubebuilder:validation:Enum=Always;IfNotPresent
type ImagePullPolicy string

const (
	// PullAlways pulls the image every time, to pick up a moved tag.
	PullAlways ImagePullPolicy = "Always"

	// PullIfNotPresent pulls the image only when the node does not have it yet.
	PullIfNotPresent ImagePullPolicy = "IfNotPresent"
)

// ImagePullJobSpec is the desired state of an ImagePullJob.
// +kubebuilder:validation:XValidation:rule="!(has(self.selector) && has(self.podSelector))",message="spec.selector and spec.podSelector are mutually exclusive"
// +kubebuilder:validation:XValidation:rule="!has(self.completionPolicy) || !has(self.completionPolicy.activeDeadlineSeconds) || self.completionPolicy.activeDeadlineSeconds >= (has(self.pullPolicy) && has(self.pullPolicy.timeoutSeconds) ? self.pullPolicy.timeoutSeconds : 600)",message="spec.completionPolicy.activeDeadlineSeconds must not be less than spec.pullPolicy.timeoutSeconds (600 by default)"
type ImagePullJobSpec struct {
	// Image is the image to pull, as a reference a container runtime accepts
	// (e.g. "nginx:1.25" or "registry.example.com/app@sha256:...").
	// +kubebuilder:validation:MinLength=1
	// +required
	Image string `json:"image"`

	ImagePullJobTemplate `json:",inline"`
}

// ImagePullJobTemplate holds everything about a pull job except the images, so that
// ImagePullJob and ImageListPullJob (and the templates that create them) share it.
type ImagePullJobTemplate struct {
	// PullSecrets names Secrets, in the job's namespace, whose registry credentials are used
	// for the pull. Only dockerconfig-style Secrets are understood by most runtimes.
	// +optional
	PullSecrets []string `json:"pullSecrets,omitempty"`

	// Selector picks the nodes to pull on, either by name or by node labels (not both).
	// Unset, together with podSelector, means every node. Mutually exclusive with podSelector.
	// +optional
	Selector *ImagePullJobNodeSelector `json:"selector,omitempty"`

	// PodSelector picks the nodes to pull on as those that run pods matching these labels,
	// in the job's namespace. Mutually exclusive with selector.
	// +optional
	PodSelector *ImagePullJobPodSelector `json:"podSelector,omitempty"`

	// Parallelism is how many nodes pull at the same time. 0 holds the job until it is raised.
	// Defaults to 1.
	// +optional
	Parallelism *intstr.IntOrString `json:"parallelism,omitempty"`

	// PullPolicy tunes each node's pull: its timeout and its retries.
	// Defaults to a 600 second timeout and 3 retries.
	// +kubebuilder:default={}
	// +optional
	PullPolicy *PullPolicy `json:"pullPolicy,omitempty"`

	// CompletionPolicy says when the job counts as finished and how long it may live.
	// Defaults to type Always.
	// +kubebuilder:default={}
	// +optional
	CompletionPolicy CompletionPolicy `json:"completionPolicy"`

	// SandboxConfig is metadata handed to the container runtime with the pull request, for
	// runtimes that need a sandbox context to pull.
	// +optional
	SandboxConfig *SandboxConfig `json:"sandboxConfig,omitempty"`

	// ImagePullPolicy is Always or IfNotPresent. Defaults to IfNotPresent.
	// +kubebuilder:default=IfNotPresent
	// +optional
	ImagePullPolicy ImagePullPolicy `json:"imagePullPolicy,omitempty"`
}

// ImagePullJobPodSelector selects pods; the job pulls on the nodes those pods run on.
type ImagePullJobPodSelector struct {
	// The label query over pods (matchLabels and matchExpressions).
	metav1.LabelSelector `json:",inline"`
}

// ImagePullJobNodeSelector selects nodes, by name or by label.
// +kubebuilder:validation:XValidation:rule="!has(self.names) || (!has(self.matchLabels) && !has(self.matchExpressions))",message="selector.names cannot be combined with selector.matchLabels or selector.matchExpressions"
type ImagePullJobNodeSelector struct {
	// Names lists the nodes to pull on, each once.
	// +listType=set
	// +optional
	Names []string `json:"names,omitempty"`

	// The label query over nodes (matchLabels and matchExpressions).
	metav1.LabelSelector `json:",inline"`
}

// The pull policy's defaults, one definition for an ImagePullJob's (and ImageListPullJob's)
// spec.pullPolicy and a NodeImage tag's pullPolicy alike.
const (
	// DefaultPullTimeoutSeconds is pullPolicy.timeoutSeconds when it is not set.
	DefaultPullTimeoutSeconds int32 = 600
	// DefaultPullBackoffLimit is pullPolicy.backoffLimit when it is not set.
	DefaultPullBackoffLimit int32 = 3
)

// PullPolicy tunes the pull on each node.
type PullPolicy struct {
	// TimeoutSeconds is how long, in seconds, one pull attempt may take. Defaults to 600.
	// +kubebuilder:default=600
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`

	// BackoffLimit is how many times a failed pull is retried before the node is marked failed.
	// Defaults to 3.
	// +kubebuilder:default=3
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`
}

// SandboxConfig is pod-sandbox metadata passed to the container runtime when it pulls.
type SandboxConfig struct {
	// Labels are the sandbox labels.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations are the sandbox annotations.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ImagePullJobStatus is the observed state of an ImagePullJob.
type ImagePullJobStatus struct {
	// StartTime is when the controller first picked the job up (RFC 3339, UTC).
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the job finished (RFC 3339, UTC).
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Desired is the number of nodes the image is to be pulled on.
	// +optional
	Desired int32 `json:"desired"`

	// Active is the number of nodes pulling now.
	// +optional
	Active int32 `json:"active"`

	// Succeeded is the number of nodes that have the image.
	// +optional
	Succeeded int32 `json:"succeeded"`

	// Failed is the number of nodes on which the pull failed.
	// +optional
	Failed int32 `json:"failed"`

	// Message summarises the job's state, mostly why it failed.
	// +optional
	Message string `json:"message,omitempty"`

	// FailedNodes are the names of the nodes on which the pull failed.
	// +optional
	FailedNodes []string `json:"failedNodes,omitempty"`
}

// ImagePullJob pulls one image onto a set of nodes ahead of the pods that need it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="TOTAL",type="integer",JSONPath=".status.desired",description="Number of nodes the job targets."
// +kubebuilder:printcolumn:name="ACTIVE",type="integer",JSONPath=".status.active",description="Number of nodes pulling now."
// +kubebuilder:printcolumn:name="SUCCEED",type="integer",JSONPath=".status.succeeded",description="Number of nodes that pulled the image."
// +kubebuilder:printcolumn:name="FAILED",type="integer",JSONPath=".status.failed",description="Number of nodes on which the pull failed."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the object was created."
// +kubebuilder:printcolumn:name="MESSAGE",type="string",JSONPath=".status.message",description="Summary of the job's state, mostly why it failed."
type ImagePullJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec ImagePullJobSpec `json:"spec,omitempty"`

	// Status is the observed state, written by the controller.
	// +optional
	Status ImagePullJobStatus `json:"status,omitempty"`
}

// ImagePullJobList is a list of ImagePullJobs.
//
// +kubebuilder:object:root=true
type ImagePullJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ImagePullJobs.
	Items []ImagePullJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ImagePullJob{}, &ImagePullJobList{})
}
