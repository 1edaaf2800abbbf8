package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EphemeralContainerEnvKey is the environment variable every ephemeral container an
// EphemeralJob adds carries, with the job's UID: it tells the job's own containers from
// others of the same name. The 1.8 name.
const EphemeralContainerEnvKey = "KRUISE_EJOB_ID"

// EphemeralJobSpec is the desired state of an EphemeralJob: ephemeral containers, added to the
// pods the selector finds, through the pods' ephemeralcontainers subresource.
type EphemeralJobSpec struct {
	// Selector finds the target pods in the job's namespace.
	// +required
	Selector *metav1.LabelSelector `json:"selector"`

	// Replicas is how many of the matched pods, oldest first, get the containers. Unset, or
	// more than match, means every matched pod.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Parallelism is the most pods whose ephemeral containers run at the same time.
	// Defaults to 1.
	// +optional
	Parallelism *int32 `json:"parallelism,omitempty"`

	// Template holds the ephemeral containers to add.
	// +required
	Template EphemeralContainerTemplateSpec `json:"template"`

	// Paused, when true, stops the job from adding containers to more pods; containers
	// already added run on. Defaults to false.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// ActiveDeadlineSeconds is how long, in seconds from the job's start, it may run before it
	// is marked failed. Must be positive. Unset means no deadline.
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// TTLSecondsAfterFinished is how long, in seconds, a finished job is kept before it is
	// deleted; 0 deletes it as soon as it finishes. Unset means 1800.
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// EphemeralContainerTemplateSpec holds the ephemeral containers an EphemeralJob adds.
type EphemeralContainerTemplateSpec struct {
	// EphemeralContainers are added to each target pod, by name.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +patchMergeKey=name
	// +patchStrategy=merge
	// +required
	EphemeralContainers []corev1.EphemeralContainer `json:"ephemeralContainers" patchStrategy:"merge" patchMergeKey:"name"`
}

// EphemeralJobStatus is the observed state of an EphemeralJob.
type EphemeralJobStatus struct {
	// Conditions are the latest observations of the job.
	// +patchMergeKey=type
	// +patchStrategy=merge
	// +optional
	Conditions []EphemeralJobCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// StartTime is when the controller first picked the job up (RFC 3339, UTC).
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the job finished (RFC 3339, UTC).
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Phase is where the job is: Waiting, Running, Succeeded, Failed, Paused, Error or Unknown.
	// +optional
	Phase EphemeralJobPhase `json:"phase"`

	// Matches is the number of target pods.
	// +optional
	Matches int32 `json:"match"`

	// Running is the number of target pods whose ephemeral containers run.
	// +optional
	Running int32 `json:"running"`

	// Succeeded is the number of target pods whose ephemeral containers all exited 0.
	// +optional
	Succeeded int32 `json:"succeeded"`

	// Waiting is the number of target pods whose ephemeral containers wait to start.
	// +optional
	Waiting int32 `json:"waiting"`

	// Failed is the number of target pods with an ephemeral container that failed.
	// +optional
	Failed int32 `json:"failed"`
}

// EphemeralJobCondition is one observation of an EphemeralJob.
type EphemeralJobCondition struct {
	// Type is the condition's type.
	// +required
	Type EphemeralJobConditionType `json:"type"`

	// Status is True, False or Unknown.
	// +required
	Status corev1.ConditionStatus `json:"status"`

	// LastProbeTime is when the condition was last checked.
	// +optional
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`

	// LastTransitionTime is when the status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`

	// Reason is a one-word, CamelCase cause of the last transition.
	// +optional
	Reason string `json:"reason,omitempty"`

	// Message explains the last transition to a human.
	// +optional
	Message string `json:"message,omitempty"`
}

// EphemeralJobConditionType is the type of an EphemeralJob condition.
type EphemeralJobConditionType string

// The condition types of an EphemeralJob; the 1.8 values.
const (
	// EJobSucceeded: the ephemeral containers exited 0 in every target pod.
	EJobSucceeded EphemeralJobConditionType = "JobSucceeded"
	// EJobFailed: an ephemeral container failed, or the job passed its deadline.
	EJobFailed EphemeralJobConditionType = "JobFailed"
	// EJobError: the job's spec cannot run, e.g. it names no container.
	EJobError EphemeralJobConditionType = "JobError"
	// EJobInitialized: the controller picked the job up.
	EJobInitialized EphemeralJobConditionType = "Initialized"
	// EJobMatchedEmpty: the selector matches no active pod.
	EJobMatchedEmpty EphemeralJobConditionType = "MatchedEmpty"
)

// EphemeralJobPhase is the lifecycle phase of an EphemeralJob.
type EphemeralJobPhase string

// The phases of an EphemeralJob; the 1.8 values.
const (
	EphemeralJobSucceeded EphemeralJobPhase = "Succeeded"
	EphemeralJobFailed    EphemeralJobPhase = "Failed"
	EphemeralJobWaiting   EphemeralJobPhase = "Waiting"
	EphemeralJobRunning   EphemeralJobPhase = "Running"
	EphemeralJobPause     EphemeralJobPhase = "Paused"
	EphemeralJobError     EphemeralJobPhase = "Error"
	EphemeralJobUnknown   EphemeralJobPhase = "Unknown"
)

// EphemeralJob adds ephemeral containers to the pods its selector finds.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ejob,scope=Namespaced
// +kubebuilder:printcolumn:name="STATUS",type="string",JSONPath=".status.phase",description="The job's phase."
// +kubebuilder:printcolumn:name="MATCH",type="integer",JSONPath=".status.match",description="Number of target pods."
// +kubebuilder:printcolumn:name="SUCCEED",type="integer",JSONPath=".status.succeeded",description="Number of pods whose ephemeral containers succeeded."
// +kubebuilder:printcolumn:name="FAILED",type="integer",JSONPath=".status.failed",description="Number of pods whose ephemeral containers failed."
// +kubebuilder:printcolumn:name="RUNNING",type="integer",JSONPath=".status.running",description="Number of pods whose ephemeral containers run."
// +kubebuilder:printcolumn:name="WAITING",type="integer",JSONPath=".status.waiting",description="Number of pods whose ephemeral containers wait."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the object was created."
type EphemeralJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec EphemeralJobSpec `json:"spec,omitempty"`

	// Status is the observed state, written by the controller.
	// +optional
	Status EphemeralJobStatus `json:"status,omitempty"`
}

// EphemeralJobList is a list of EphemeralJobs.
//
// +kubebuilder:object:root=true
type EphemeralJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the EphemeralJobs.
	Items []EphemeralJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&EphemeralJob{}, &EphemeralJobList{})
}
