package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ImageListPullJobSpec is the desired state of an ImageListPullJob; it is also the spec of
// the ImageListPullJobs an AdvancedCronJob creates.
// +kubebuilder:validation:XValidation:rule="!(has(self.selector) && has(self.podSelector))",message="spec.selector and spec.podSelector are mutually exclusive"
type ImageListPullJobSpec struct {
	// Images are the images to pull, each once, at most 255. One ImagePullJob is created
	// per image.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=255
	// +kubebuilder:validation:items:MinLength=1
	// +listType=set
	// +required
	Images []string `json:"images"`

	ImagePullJobTemplate `json:",inline"`
}

// ImageListPullJobStatus is the observed state of an ImageListPullJob.
type ImageListPullJobStatus struct {
	// StartTime is when the controller first picked the job up (RFC 3339, UTC).
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when every ImagePullJob of this job had finished (RFC 3339, UTC).
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Desired is the number of ImagePullJobs wanted, one per image in spec.images.
	// +optional
	Desired int32 `json:"desired"`

	// Active is the number of ImagePullJobs that are running.
	// +optional
	Active int32 `json:"active"`

	// Completed is the number of ImagePullJobs that have finished, whatever their outcome.
	// +optional
	Completed int32 `json:"completed"`

	// Succeeded is the number of ImagePullJobs that finished with the image on every node.
	// +optional
	Succeeded int32 `json:"succeeded"`

	// FailedImageStatuses describe the ImagePullJobs that failed on at least one node.
	// +optional
	FailedImageStatuses []*FailedImageStatus `json:"failedImageStatuses,omitempty"`
}

// FailedImageStatus describes an ImagePullJob that failed on at least one node.
type FailedImageStatus struct {
	// ImagePullJob is the name of the ImagePullJob.
	// +optional
	ImagePullJob string `json:"imagePullJob,omitempty"`

	// Name is the image the job pulls.
	// +optional
	Name string `json:"name,omitempty"`

	// Message is the job's status message.
	// +optional
	Message string `json:"message,omitempty"`
}

// ImageListPullJob pulls a list of images onto a set of nodes, through one ImagePullJob per image.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="TOTAL",type="integer",JSONPath=".status.desired",description="Number of ImagePullJobs, one per image."
// +kubebuilder:printcolumn:name="SUCCEEDED",type="integer",JSONPath=".status.succeeded",description="Number of ImagePullJobs that succeeded."
// +kubebuilder:printcolumn:name="COMPLETED",type="integer",JSONPath=".status.completed",description="Number of ImagePullJobs that have finished."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the object was created."
type ImageListPullJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec ImageListPullJobSpec `json:"spec,omitempty"`

	// Status is the observed state, written by the controller.
	// +optional
	Status ImageListPullJobStatus `json:"status,omitempty"`
}

// ImageListPullJobList is a list of ImageListPullJobs.
//
// +kubebuilder:object:root=true
type ImageListPullJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ImageListPullJobs.
	Items []ImageListPullJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ImageListPullJob{}, &ImageListPullJobList{})
}
