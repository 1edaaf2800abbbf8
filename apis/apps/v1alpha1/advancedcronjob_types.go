package v1alpha1

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AdvancedCronJobKind is the kind name of AdvancedCronJob.
const AdvancedCronJobKind = "AdvancedCronJob"

// AdvancedCronJobSpec is the desired state of an AdvancedCronJob.
// +kubebuilder:validation:XValidation:rule="!has(self.timeZone) || !self.schedule.contains('TZ')",message="spec.schedule must not carry TZ or CRON_TZ when spec.timeZone is set"
type AdvancedCronJobSpec struct {
	// Schedule is when to create a job, in standard five-field cron syntax
	// (e.g. "*/5 * * * *"; see https://en.wikipedia.org/wiki/Cron).
	// +kubebuilder:validation:MinLength=1
	// +required
	Schedule string `json:"schedule"`

	// TimeZone is the IANA time zone the schedule is read in (e.g. "Europe/Paris"); "Local"
	// is not accepted. Unset uses the time zone of the controller's process.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self.lowerAscii() != 'local'",message="spec.timeZone must name an explicit IANA time zone, not Local"
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// StartingDeadlineSeconds is how late, in seconds, a missed run may still be started; runs
	// missed by more count as failed. Unset means no limit.
	// +kubebuilder:validation:Minimum=0
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// ConcurrencyPolicy says what to do when a run is due while the previous job still runs:
	// Allow (run both), Forbid (skip the new run) or Replace (stop the old job, start the new).
	// Defaults to Allow.
	// +kubebuilder:default=Allow
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// Paused, when true, stops new runs from being scheduled; running jobs are left alone.
	// Defaults to false.
	// +kubebuilder:default=false
	// +optional
	Paused *bool `json:"paused,omitempty"`

	// SuccessfulJobsHistoryLimit is how many successfully finished jobs are kept. Defaults to 3.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +optional
	SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty"`

	// FailedJobsHistoryLimit is how many failed jobs are kept. Defaults to 1.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	FailedJobsHistoryLimit *int32 `json:"failedJobsHistoryLimit,omitempty"`

	// Template is the job created at each run. Exactly one kind of template must be set.
	// Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.template is immutable"
	// +required
	Template CronJobTemplate `json:"template"`
}

// CronJobTemplate holds the template of the job created at each run; exactly one field is set.
// +kubebuilder:validation:XValidation:rule="(has(self.jobTemplate) ? 1 : 0) + (has(self.broadcastJobTemplate) ? 1 : 0) + (has(self.imageListPullJobTemplate) ? 1 : 0) == 1",message="spec.template must set exactly one of jobTemplate, broadcastJobTemplate and imageListPullJobTemplate"
type CronJobTemplate struct {
	// JobTemplate creates a batch/v1 Job at each run.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +optional
	JobTemplate *batchv1.JobTemplateSpec `json:"jobTemplate,omitempty"`

	// BroadcastJobTemplate creates a BroadcastJob at each run.
	// +optional
	BroadcastJobTemplate *BroadcastJobTemplateSpec `json:"broadcastJobTemplate,omitempty"`

	// ImageListPullJobTemplate creates an ImageListPullJob at each run, e.g. to warm nodes with
	// images every night.
	// +optional
	ImageListPullJobTemplate *ImageListPullJobTemplateSpec `json:"imageListPullJobTemplate,omitempty"`
}

// TemplateKind is the kind of job an AdvancedCronJob creates.
type TemplateKind string

const (
	// JobTemplate: the AdvancedCronJob creates batch/v1 Jobs.
	JobTemplate TemplateKind = "Job"

	// BroadcastJobTemplate: the AdvancedCronJob creates BroadcastJobs.
	BroadcastJobTemplate TemplateKind = "BroadcastJob"

	// ImageListPullJobTemplate: the AdvancedCronJob creates ImageListPullJobs.
	ImageListPullJobTemplate TemplateKind = "ImageListPullJob"
)

// BroadcastJobTemplateSpec is the metadata and spec of the BroadcastJobs created from a template.
type BroadcastJobTemplateSpec struct {
	// Metadata given to each BroadcastJob created.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec of each BroadcastJob created.
	// +optional
	Spec BroadcastJobSpec `json:"spec,omitempty"`
}

// ImageListPullJobTemplateSpec is the metadata and spec of the ImageListPullJobs created from
// a template.
type ImageListPullJobTemplateSpec struct {
	// Metadata given to each ImageListPullJob created.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec of each ImageListPullJob created.
	// +optional
	Spec ImageListPullJobSpec `json:"spec,omitempty"`
}

// ConcurrencyPolicy says how runs that overlap are handled.
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

const (
	// AllowConcurrent lets jobs of successive runs run at the same time.
	AllowConcurrent ConcurrencyPolicy = "Allow"

	// ForbidConcurrent skips a run while the previous job has not finished.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"

	// ReplaceConcurrent stops the previous job and starts the new one.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// AdvancedCronJobStatus is the observed state of an AdvancedCronJob.
type AdvancedCronJobStatus struct {
	// Type is the kind of job created: Job, BroadcastJob or ImageListPullJob.
	// +optional
	Type TemplateKind `json:"type,omitempty"`

	// Active references the jobs created by this AdvancedCronJob that are still running.
	// +optional
	Active []corev1.ObjectReference `json:"active,omitempty"`

	// LastScheduleTime is when a job was last created (RFC 3339, UTC).
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
}

// AdvancedCronJob creates Jobs, BroadcastJobs or ImageListPullJobs on a cron schedule.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=acj,scope=Namespaced
// +kubebuilder:printcolumn:name="Schedule",type="string",JSONPath=".spec.schedule",description="The cron schedule."
// +kubebuilder:printcolumn:name="Type",type="string",JSONPath=".status.type",description="Kind of job created."
// +kubebuilder:printcolumn:name="LastScheduleTime",type="date",JSONPath=".status.lastScheduleTime",description="When a job was last created."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the object was created."
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63 && !self.metadata.name.contains('.')",message="metadata.name of an AdvancedCronJob must be at most 63 characters of alphanumerics and '-'"
type AdvancedCronJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec AdvancedCronJobSpec `json:"spec,omitempty"`

	// Status is the observed state, written by the controller.
	// +optional
	Status AdvancedCronJobStatus `json:"status,omitempty"`
}

// AdvancedCronJobList is a list of AdvancedCronJobs.
//
// +kubebuilder:object:root=true
type AdvancedCronJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the AdvancedCronJobs.
	Items []AdvancedCronJob `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AdvancedCronJob{}, &AdvancedCronJobList{})
}
