package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
)

// DefaultCloneSetMaxUnavailable is spec.updateStrategy.maxUnavailable when it is not set.
const DefaultCloneSetMaxUnavailable = "20%"

// CloneSetSpec is the desired state of a CloneSet.
type CloneSetSpec struct {
	// Replicas is the number of pods the CloneSet keeps. Default 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// Selector picks the pods this CloneSet owns. It must match the labels of the template
	// and cannot be changed once the CloneSet exists.
	// +required
	// +kubebuilder:validation:XValidation:rule="(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)",message="spec.selector must have at least one matchLabels entry or matchExpressions term"
	// In a UnitedDeployment's cloneSetTemplate it may change: the UnitedDeployment sets the
	// selector of each subset CloneSet itself.
	Selector *metav1.LabelSelector `json:"selector"`

	// Template is the pod template every pod of the CloneSet is created from.
	// +required
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Template corev1.PodTemplateSpec `json:"template"`

	// VolumeClaimTemplates are PVCs created for each pod and mounted by the volume of the same
	// name. A pod's PVCs carry its instance id; they are deleted with the pod when the CloneSet
	// scales in or recreates the pod, and kept (for reuse) when the pod is deleted by others.
	// +optional
	VolumeClaimTemplates []corev1.PersistentVolumeClaim `json:"volumeClaimTemplates,omitempty"`

	// ScaleStrategy tunes how pods are added and removed.
	// +optional
	ScaleStrategy CloneSetScaleStrategy `json:"scaleStrategy,omitempty"`

	// UpdateStrategy tunes how pods are moved to a new template revision.
	// +optional
	// +kubebuilder:default={}
	UpdateStrategy CloneSetUpdateStrategy `json:"updateStrategy,omitempty"`

	// RevisionHistoryLimit is how many old ControllerRevisions are kept for rollback.
	// Default 10.
	// +optional
	// +kubebuilder:default=10
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// MinReadySeconds is how long, in seconds, a new pod must stay ready with no container
	// crashing before it counts as available. Default 0: available as soon as ready.
	// +optional
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`

	// Lifecycle holds pods at chosen points (after creation, before an in-place update,
	// before deletion) until the user's own controller releases them.
	// +optional
	Lifecycle *appspub.Lifecycle `json:"lifecycle,omitempty"`
}

// CloneSetScaleStrategy tunes scaling.
type CloneSetScaleStrategy struct {
	// PodsToDelete names pods the CloneSet must delete; with an unchanged replicas count it
	// creates replacements, with a lowered count these pods go first. Names of pods that no
	// longer exist are removed from the list by the controller.
	// +optional
	PodsToDelete []string `json:"podsToDelete,omitempty"`

	// MaxUnavailable caps, while scaling out, the number of new pods that may be not yet
	// available at once: an absolute number or a percentage of replicas. Unset means no cap.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// DisablePVCReuse makes the CloneSet delete the leftover PVCs of a pod deleted by others
	// instead of attaching them to its replacement. Default false.
	// +optional
	DisablePVCReuse bool `json:"disablePVCReuse,omitempty"`
}

// CloneSetUpdateStrategyType is how a CloneSet moves a pod to a new revision.
// +kubebuilder:validation:Enum=ReCreate;InPlaceIfPossible;InPlaceOnly
type CloneSetUpdateStrategyType string

const (
	// RecreateCloneSetUpdateStrategyType deletes the old pod and creates a new one.
	RecreateCloneSetUpdateStrategyType CloneSetUpdateStrategyType = "ReCreate"
	// InPlaceIfPossibleCloneSetUpdateStrategyType updates the pod in place when only fields
	// that can change in place differ (images, metadata, resources where supported) and
	// recreates it otherwise.
	InPlaceIfPossibleCloneSetUpdateStrategyType CloneSetUpdateStrategyType = "InPlaceIfPossible"
	// InPlaceOnlyCloneSetUpdateStrategyType always updates in place; template changes that
	// cannot be applied in place are refused.
	InPlaceOnlyCloneSetUpdateStrategyType CloneSetUpdateStrategyType = "InPlaceOnly"
)

// CloneSetUpdateStrategy tunes updates.
type CloneSetUpdateStrategy struct {
	// Type is how each pod is updated: ReCreate, InPlaceIfPossible or InPlaceOnly.
	// Default ReCreate.
	// +optional
	// +kubebuilder:default=ReCreate
	Type CloneSetUpdateStrategyType `json:"type,omitempty"`

	// Partition is the number of pods, or the percentage of replicas (rounded up), to keep at
	// old revisions; replicas minus partition pods are updated. Default 0: update all.
	// +optional
	// +kubebuilder:default=0
	Partition *intstr.IntOrString `json:"partition,omitempty"`

	// MaxUnavailable is the most pods that may be unavailable during an update: a number or a
	// percentage of replicas (rounded up, or down when maxSurge is above 0). Default 20%.
	// +optional
	// +kubebuilder:default="20%"
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// MaxSurge is the most pods that may be created above replicas during an update or a
	// specified deletion: a number or a percentage of replicas (rounded up). Default 0.
	// +optional
	// +kubebuilder:default=0
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// Paused stops the update (not scaling) while true. Default false.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// PriorityStrategy orders the pods to update by weight or by label value.
	// +optional
	PriorityStrategy *appspub.UpdatePriorityStrategy `json:"priorityStrategy,omitempty"`

	// ScatterStrategy spreads pods with the given labels across update batches; it is applied
	// after the priority order.
	// +optional
	ScatterStrategy UpdateScatterStrategy `json:"scatterStrategy,omitempty"`

	// InPlaceUpdateStrategy tunes in-place updates.
	// +optional
	InPlaceUpdateStrategy *appspub.InPlaceUpdateStrategy `json:"inPlaceUpdateStrategy,omitempty"`
}

// CloneSetStatus is the observed state of a CloneSet.
type CloneSetStatus struct {
	// ObservedGeneration is the metadata.generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Replicas is the number of pods the CloneSet owns.
	// +required
	Replicas int32 `json:"replicas"`

	// ReadyReplicas is the number of owned pods that are ready.
	// +required
	ReadyReplicas int32 `json:"readyReplicas"`

	// AvailableReplicas is the number of owned pods ready for at least minReadySeconds.
	// +required
	AvailableReplicas int32 `json:"availableReplicas"`

	// UpdatedReplicas is the number of owned pods at updateRevision.
	// +required
	UpdatedReplicas int32 `json:"updatedReplicas"`

	// UpdatedReadyReplicas is the number of pods at updateRevision that are ready.
	// +required
	UpdatedReadyReplicas int32 `json:"updatedReadyReplicas"`

	// UpdatedAvailableReplicas is the number of pods at updateRevision ready for at least
	// minReadySeconds. A pod being resized in place does not count.
	// +optional
	UpdatedAvailableReplicas int32 `json:"updatedAvailableReplicas,omitempty"`

	// ExpectedUpdatedReplicas is the number of pods that should reach updateRevision, that is
	// replicas minus the resolved partition.
	// +optional
	ExpectedUpdatedReplicas int32 `json:"expectedUpdatedReplicas,omitempty"`

	// UpdateRevision is the name of the ControllerRevision of the current template.
	// +optional
	UpdateRevision string `json:"updateRevision,omitempty"`

	// CurrentRevision is the name of the ControllerRevision all pods were at before the
	// latest update started.
	// +optional
	CurrentRevision string `json:"currentRevision,omitempty"`

	// CollisionCount counts hash collisions of revision names; the controller mixes it into
	// the next revision name to avoid them.
	// +optional
	CollisionCount *int32 `json:"collisionCount,omitempty"`

	// Conditions report scale and update failures.
	// +optional
	Conditions []CloneSetCondition `json:"conditions,omitempty"`

	// LabelSelector is spec.selector in string form, for the scale subresource (HPA).
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
}

// CloneSetConditionType names a CloneSet condition.
type CloneSetConditionType string

const (
	// CloneSetConditionFailedScale is True when creating or deleting pods or PVCs failed.
	CloneSetConditionFailedScale CloneSetConditionType = "FailedScale"
	// CloneSetConditionFailedUpdate is True when updating pods failed.
	CloneSetConditionFailedUpdate CloneSetConditionType = "FailedUpdate"
)

// CloneSetCondition is one observation about a CloneSet.
type CloneSetCondition struct {
	// Type names the condition.
	// +required
	Type CloneSetConditionType `json:"type"`
	// Status is True, False or Unknown.
	// +required
	Status corev1.ConditionStatus `json:"status"`
	// LastTransitionTime is when Status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// Reason is a one-word CamelCase cause of the last change.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message explains the last change to a human.
	// +optional
	Message string `json:"message,omitempty"`
}

// CloneSet runs a set of interchangeable pods, like a Deployment, with in-place updates,
// per-pod PVCs, specified deletion, partitioned and prioritised rollouts and lifecycle hooks.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.labelSelector
// +kubebuilder:resource:shortName=clone,scope=Namespaced
// +kubebuilder:printcolumn:name="DESIRED",type="integer",JSONPath=".spec.replicas",description="Desired number of pods."
// +kubebuilder:printcolumn:name="UPDATED",type="integer",JSONPath=".status.updatedReplicas",description="Pods at the update revision."
// +kubebuilder:printcolumn:name="UPDATED_READY",type="integer",JSONPath=".status.updatedReadyReplicas",description="Pods at the update revision that are ready."
// +kubebuilder:printcolumn:name="UPDATED_AVAILABLE",type="integer",priority=1,JSONPath=".status.updatedAvailableReplicas",description="Pods at the update revision that are available."
// +kubebuilder:printcolumn:name="READY",type="integer",JSONPath=".status.readyReplicas",description="Pods that are ready."
// +kubebuilder:printcolumn:name="TOTAL",type="integer",JSONPath=".status.replicas",description="All pods owned."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation."
// +kubebuilder:printcolumn:name="CONTAINERS",type="string",priority=1,JSONPath=".spec.template.spec.containers[*].name",description="Container names of the pod template."
// +kubebuilder:printcolumn:name="IMAGES",type="string",priority=1,JSONPath=".spec.template.spec.containers[*].image",description="Container images of the pod template."
// +kubebuilder:printcolumn:name="SELECTOR",type="string",priority=1,JSONPath=".status.labelSelector",description="Label selector of the pods."
type CloneSet struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.selector == oldSelf.selector",message="spec.selector is immutable",fieldPath=".selector"
	Spec CloneSetSpec `json:"spec,omitempty"`
	// Status is the observed state, written by the controller.
	// +optional
	Status CloneSetStatus `json:"status,omitempty"`
}

// CloneSetList is a list of CloneSets.
//
// +kubebuilder:object:root=true
type CloneSetList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the CloneSets.
	Items []CloneSet `json:"items"`
}

func init() {
	SchemeBuilder.Register(&CloneSet{}, &CloneSetList{})
}
