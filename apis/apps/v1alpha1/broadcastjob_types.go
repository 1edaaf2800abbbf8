package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Labels the BroadcastJob controller puts on every pod of a job, by which it finds them; a job's
// template may not set them. The 1.8 names.
const (
	// BroadcastJobNameLabel holds the job's name.
	BroadcastJobNameLabel = "broadcastjob-name"
	// BroadcastJobControllerUIDLabel holds the job's UID.
	BroadcastJobControllerUIDLabel = "broadcastjob-controller-uid"
)

// BroadcastJobSpec is the desired state of a BroadcastJob: one pod, built from the template,
// runs to completion on every node that can host it.
type BroadcastJobSpec struct {
	// Parallelism caps how many of the job's pods may be running at the same time, as a count
	// or a percentage of the eligible nodes. 0 holds the job until it is raised.
	// Defaults to 2147483647, which in practice means no cap.
	// +kubebuilder:default=2147483647
	// +optional
	Parallelism *intstr.IntOrString `json:"parallelism,omitempty"`

	// Template is the pod run on each eligible node. Its restartPolicy must be Never or
	// OnFailure; the controller adds the node affinity that pins each pod to its node.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +required
	Template corev1.PodTemplateSpec `json:"template"`

	// CompletionPolicy says when the job counts as finished and how long it may live.
	// Defaults to type Always.
	// +kubebuilder:default={}
	// +optional
	CompletionPolicy CompletionPolicy `json:"completionPolicy"`

	// Paused, when true, stops the controller from creating new pods for this job; pods
	// already running are left alone. Defaults to false.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// FailurePolicy says what the job does when one of its pods fails.
	// Defaults to type FailFast.
	// +kubebuilder:default={}
	// +optional
	FailurePolicy FailurePolicy `json:"failurePolicy,omitempty"`
}

// CompletionPolicy decides when a job is complete and when a finished job is cleaned up.
// It is shared by BroadcastJob, ImagePullJob and ImageListPullJob.
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'Never' || (!has(self.activeDeadlineSeconds) && !has(self.ttlSecondsAfterFinished))",message="completionPolicy.activeDeadlineSeconds and completionPolicy.ttlSecondsAfterFinished may only be set when completionPolicy.type is Always"
type CompletionPolicy struct {
	// Type is Always (the job finishes once every targeted node is done, or on its deadline)
	// or Never (the job stays active and also serves nodes that join later).
	// Defaults to Always.
	// +kubebuilder:default=Always
	// +optional
	Type CompletionPolicyType `json:"type,omitempty"`

	// ActiveDeadlineSeconds is how long, in seconds from the job's start time, the job may run
	// before it is stopped and marked failed. Only valid with type Always. Unset means no deadline.
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// TTLSecondsAfterFinished is how long, in seconds, a finished job is kept before it is
	// deleted; 0 deletes it as soon as it finishes. Only valid with type Always.
	// Unset keeps finished jobs forever.
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// CompletionPolicyType names a completion policy.
// +kubebuilder:validation:Enum=Always;Never
type CompletionPolicyType string

const (
	// Always completes the job when every targeted node has finished (successfully or not),
	// when the active deadline passes, or when the restart limit is exceeded.
	Always CompletionPolicyType = "Always"

	// Never keeps the job running after the current nodes are done, so that nodes added later
	// get their pod too.
	Never CompletionPolicyType = "Never"
)

// FailurePolicy says how a BroadcastJob reacts to a failed pod.
type FailurePolicy struct {
	// Type is Continue (keep going), FailFast (mark the job failed) or Pause (pause the job).
	// Defaults to FailFast.
	// +kubebuilder:default=FailFast
	// +optional
	Type FailurePolicyType `json:"type,omitempty"`

	// RestartLimit is how many container restarts, summed over the job's pods, are tolerated
	// before the job is marked failed. Defaults to 0.
	// +optional
	RestartLimit int32 `json:"restartLimit,omitempty"`
}

// FailurePolicyType names a failure policy.
// +kubebuilder:validation:Enum=Continue;FailFast;Pause
type FailurePolicyType string

const (
	// FailurePolicyTypeContinue keeps the job running when a pod fails.
	FailurePolicyTypeContinue FailurePolicyType = "Continue"

	// FailurePolicyTypeFailFast marks the job failed as soon as a pod fails. The default.
	FailurePolicyTypeFailFast FailurePolicyType = "FailFast"

	// FailurePolicyTypePause pauses the job when a pod fails.
	FailurePolicyTypePause FailurePolicyType = "Pause"
)

// BroadcastJobStatus is the observed state of a BroadcastJob.
type BroadcastJobStatus struct {
	// Conditions are the latest observations of the job, e.g. Complete or Failed.
	// +patchMergeKey=type
	// +patchStrategy=merge
	// +optional
	Conditions []JobCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// StartTime is when the controller first picked the job up (RFC 3339, UTC).
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the job finished (RFC 3339, UTC).
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Active is the number of the job's pods that are running now.
	// +optional
	Active int32 `json:"active"`

	// Succeeded is the number of the job's pods that ended in phase Succeeded.
	// +optional
	Succeeded int32 `json:"succeeded"`

	// Failed is the number of the job's pods that ended in phase Failed.
	// +optional
	Failed int32 `json:"failed"`

	// Desired is the number of pods the job wants, normally the number of eligible nodes.
	// +optional
	Desired int32 `json:"desired"`

	// Phase is where the job is: running, paused, completed or failed.
	// +optional
	Phase BroadcastJobPhase `json:"phase"`
}

// BroadcastJobPhase is the lifecycle phase of a BroadcastJob.
type BroadcastJobPhase string

const (
	// PhaseCompleted: the job has finished.
	PhaseCompleted BroadcastJobPhase = "completed"

	// PhaseRunning: the job is creating or waiting for pods.
	PhaseRunning BroadcastJobPhase = "running"

	// PhasePaused: the job is paused, by the user or by its failure policy.
	PhasePaused BroadcastJobPhase = "paused"

	// PhaseFailed: the job has failed.
	PhaseFailed BroadcastJobPhase = "failed"
)

// JobConditionType is the type of a BroadcastJob condition.
type JobConditionType string

const (
	// JobComplete: a pod ran, to success or failure, on every node that was eligible when the
	// job was evaluated.
	JobComplete JobConditionType = "Complete"

	// JobFailed: the job passed its active deadline or its restart limit, or a pod failed
	// under the FailFast policy.
	JobFailed JobConditionType = "Failed"
)

// JobCondition is one observation of a BroadcastJob.
type JobCondition struct {
	// Type is Complete or Failed.
	// +required
	Type JobConditionType `json:"type"`

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

// BroadcastJob runs a pod to completion on every eligible node of the cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bcj,scope=Namespaced
// +kubebuilder:printcolumn:name="Desired",type="integer",JSONPath=".status.desired",description="Number of pods the job wants, normally the number of eligible nodes."
// +kubebuilder:printcolumn:name="Active",type="integer",JSONPath=".status.active",description="Number of the job's pods running now."
// +kubebuilder:printcolumn:name="Succeeded",type="integer",JSONPath=".status.succeeded",description="Number of the job's pods that succeeded."
// +kubebuilder:printcolumn:name="Failed",type="integer",JSONPath=".status.failed",description="Number of the job's pods that failed."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the object was created."
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63 && !self.metadata.name.contains('.')",message="metadata.name of a BroadcastJob must be at most 63 characters of alphanumerics and '-'"
type BroadcastJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec BroadcastJobSpec `json:"spec,omitempty"`

	// Status is the observed state, written by the controller.
	// +optional
	Status BroadcastJobStatus `json:"status,omitempty"`
}

// BroadcastJobList is a list of BroadcastJobs.
//
// +kubebuilder:object:root=true
type BroadcastJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the BroadcastJobs.
	Items []BroadcastJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BroadcastJob{}, &BroadcastJobList{})
}
