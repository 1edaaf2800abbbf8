package v1beta1

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
)

// MaxMinReadySeconds is the largest accepted spec.updateStrategy.rollingUpdate.minReadySeconds.
const MaxMinReadySeconds = 300

// Condition types an Advanced StatefulSet reports in status.conditions.
const (
	// FailedCreatePod is True when the controller could not create a pod.
	FailedCreatePod appsv1.StatefulSetConditionType = "FailedCreatePod"
	// FailedUpdatePod is True when the controller could not update a pod.
	FailedUpdatePod appsv1.StatefulSetConditionType = "FailedUpdatePod"
)

// StatefulSetSpec is the desired state of an Advanced StatefulSet.
type StatefulSetSpec struct {
	// Replicas is the number of pods to run. Default 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// Selector picks the pods this StatefulSet owns. It must match the labels of the template
	// and cannot be changed once the StatefulSet exists.
	// +required
	// +kubebuilder:validation:XValidation:rule="(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)",message="spec.selector must have at least one matchLabels entry or matchExpressions term"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.selector is immutable"
	Selector *metav1.LabelSelector `json:"selector"`

	// Template is the pod template; each pod gets a stable name <set>-<ordinal> on top of it.
	// +required
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Template corev1.PodTemplateSpec `json:"template"`

	// VolumeClaimTemplates are PVCs created per ordinal and bound to the pod of that ordinal
	// through the volume of the same name. They take precedence over template volumes of the
	// same name.
	// +optional
	VolumeClaimTemplates []corev1.PersistentVolumeClaim `json:"volumeClaimTemplates,omitempty"`

	// VolumeClaimUpdateStrategy says when changes to volumeClaimTemplates reach existing PVCs.
	// It only takes effect when PVC auto-resizing is enabled in the controller.
	// +optional
	VolumeClaimUpdateStrategy VolumeClaimUpdateStrategy `json:"volumeClaimUpdateStrategy,omitempty"`

	// ServiceName is the headless Service that gives the pods their DNS names,
	// <pod>.<serviceName>.<namespace>.svc. It cannot be changed once set.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.serviceName is immutable"
	ServiceName string `json:"serviceName,omitempty"`

	// PodManagementPolicy is OrderedReady (create pods one by one in ordinal order, each
	// waiting for the previous to be ready, and delete in reverse) or Parallel (create and
	// delete without waiting). Default OrderedReady. It cannot be changed.
	// +optional
	// +kubebuilder:default=OrderedReady
	// +kubebuilder:validation:Enum=OrderedReady;Parallel
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.podManagementPolicy is immutable"
	PodManagementPolicy appsv1.PodManagementPolicyType `json:"podManagementPolicy,omitempty"`

	// UpdateStrategy tunes how pods move to a new template revision.
	// +optional
	// +kubebuilder:default={}
	UpdateStrategy StatefulSetUpdateStrategy `json:"updateStrategy,omitempty"`

	// RevisionHistoryLimit is how many old ControllerRevisions are kept for rollback.
	// Default 10.
	// +optional
	// +kubebuilder:default=10
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// ReserveOrdinals are ordinals the controller must skip: no pod is run with them, and
	// replicas still counts the running pods. Items are ordinals (3) or inclusive ranges as
	// strings ("5-8"). Reserving the ordinal of a running pod deletes it; without lowering
	// replicas a pod with the next free ordinal replaces it.
	// +optional
	ReserveOrdinals []intstr.IntOrString `json:"reserveOrdinals,omitempty"`

	// Lifecycle holds pods at chosen points (after creation, before an in-place update,
	// before deletion) until the user's own controller releases them.
	// +optional
	Lifecycle *appspub.Lifecycle `json:"lifecycle,omitempty"`

	// ScaleStrategy tunes scaling.
	// +optional
	ScaleStrategy *StatefulSetScaleStrategy `json:"scaleStrategy,omitempty"`

	// PersistentVolumeClaimRetentionPolicy says whether the PVCs made from
	// volumeClaimTemplates are deleted when the StatefulSet is deleted or scaled in.
	// Default: retain them in both cases.
	// +optional
	// +kubebuilder:default={whenDeleted: Retain, whenScaled: Retain}
	PersistentVolumeClaimRetentionPolicy *StatefulSetPersistentVolumeClaimRetentionPolicy `json:"persistentVolumeClaimRetentionPolicy,omitempty"`

	// Ordinals sets the first ordinal used for pod names.
	// +optional
	Ordinals *StatefulSetOrdinals `json:"ordinals,omitempty"`
}

// StatefulSetUpdateStrategy tunes updates.
type StatefulSetUpdateStrategy struct {
	// Type is RollingUpdate (the controller replaces pods) or OnDelete (a pod moves to the
	// new revision only when someone deletes it). Default RollingUpdate.
	// +optional
	// +kubebuilder:default=RollingUpdate
	// +kubebuilder:validation:Enum=RollingUpdate;OnDelete
	Type appsv1.StatefulSetUpdateStrategyType `json:"type,omitempty"`

	// RollingUpdate tunes a RollingUpdate; it must be left out for OnDelete.
	// +optional
	RollingUpdate *RollingUpdateStatefulSetStrategy `json:"rollingUpdate,omitempty"`
}

// PodUpdateStrategyType is how a pod is moved to a new revision.
// +kubebuilder:validation:Enum=ReCreate;InPlaceIfPossible;InPlaceOnly
type PodUpdateStrategyType string

const (
	// RecreatePodUpdateStrategyType deletes the old pod and creates a new one.
	RecreatePodUpdateStrategyType PodUpdateStrategyType = "ReCreate"
	// InPlaceIfPossiblePodUpdateStrategyType updates the pod in place when only fields that
	// can change in place differ, and recreates it otherwise.
	InPlaceIfPossiblePodUpdateStrategyType PodUpdateStrategyType = "InPlaceIfPossible"
	// InPlaceOnlyPodUpdateStrategyType always updates in place; template changes that cannot
	// be applied in place are refused.
	InPlaceOnlyPodUpdateStrategyType PodUpdateStrategyType = "InPlaceOnly"
)

// RollingUpdateStatefulSetStrategy tunes a rolling update.
type RollingUpdateStatefulSetStrategy struct {
	// Partition keeps pods at old revisions: in ordered updates those with an ordinal below
	// partition, with unorderedUpdate this many pods. Default 0: update all.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	Partition *int32 `json:"partition,omitempty"`

	// MaxUnavailable is the most pods that may be unavailable during the update: a number, at
	// least 1, or a percentage of replicas (rounded down). Values other than 1 need the
	// Parallel podManagementPolicy. Default 1.
	// +optional
	// +kubebuilder:default=1
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// PodUpdatePolicy is ReCreate, InPlaceIfPossible or InPlaceOnly. The in-place policies
	// need the InPlaceUpdateReady readiness gate in the pod template. Default ReCreate.
	// +optional
	// +kubebuilder:default=ReCreate
	PodUpdatePolicy PodUpdateStrategyType `json:"podUpdatePolicy,omitempty"`

	// Paused stops the update (not scaling) while true. Default false.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// UnorderedUpdate, when set, updates pods in priority order instead of reverse ordinal
	// order. It needs the Parallel podManagementPolicy.
	// +optional
	UnorderedUpdate *UnorderedUpdateStrategy `json:"unorderedUpdate,omitempty"`

	// InPlaceUpdateStrategy tunes in-place updates.
	// +optional
	InPlaceUpdateStrategy *appspub.InPlaceUpdateStrategy `json:"inPlaceUpdateStrategy,omitempty"`

	// MinReadySeconds is how long, in seconds, an updated or new pod must stay ready before
	// the next one is touched; with OrderedReady it also paces scale-out. From 0 to 300.
	// Default 0.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=300
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`
}

// UnorderedUpdateStrategy orders an update by priority rather than by ordinal.
type UnorderedUpdateStrategy struct {
	// PriorityStrategy orders the pods to update by weight or by label value.
	// +optional
	PriorityStrategy *appspub.UpdatePriorityStrategy `json:"priorityStrategy,omitempty"`
}

// VolumeClaimUpdateStrategyType says when an existing PVC follows a changed template.
// +kubebuilder:validation:Enum=OnPodRollingUpdate;OnDelete
type VolumeClaimUpdateStrategyType string

const (
	// OnPodRollingUpdateVolumeClaimUpdateStrategyType updates (resizes) a pod's PVCs as part of
	// the pod's rolling update.
	OnPodRollingUpdateVolumeClaimUpdateStrategyType VolumeClaimUpdateStrategyType = "OnPodRollingUpdate"
	// OnPVCDeleteVolumeClaimUpdateStrategyType leaves existing PVCs alone; a PVC follows the
	// new template only after the user deletes it and it is recreated.
	OnPVCDeleteVolumeClaimUpdateStrategyType VolumeClaimUpdateStrategyType = "OnDelete"
)

// VolumeClaimUpdateStrategy says how changes to volumeClaimTemplates are rolled out.
type VolumeClaimUpdateStrategy struct {
	// Type is OnPodRollingUpdate or OnDelete.
	// +optional
	Type VolumeClaimUpdateStrategyType `json:"type,omitempty"`
}

// StatefulSetScaleStrategy tunes scaling.
type StatefulSetScaleStrategy struct {
	// MaxUnavailable caps the number of pods that may be unavailable while scaling: a number
	// or a percentage of replicas (rounded down). It needs the Parallel podManagementPolicy.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// PersistentVolumeClaimRetentionPolicyType says whether PVCs are kept.
// +kubebuilder:validation:Enum=Retain;Delete
type PersistentVolumeClaimRetentionPolicyType string

const (
	// RetainPersistentVolumeClaimRetentionPolicyType keeps the PVCs.
	RetainPersistentVolumeClaimRetentionPolicyType PersistentVolumeClaimRetentionPolicyType = "Retain"
	// DeletePersistentVolumeClaimRetentionPolicyType deletes the PVCs.
	DeletePersistentVolumeClaimRetentionPolicyType PersistentVolumeClaimRetentionPolicyType = "Delete"
)

// StatefulSetPersistentVolumeClaimRetentionPolicy says what happens to the PVCs made from
// volumeClaimTemplates.
type StatefulSetPersistentVolumeClaimRetentionPolicy struct {
	// WhenDeleted applies when the StatefulSet is deleted: Retain or Delete. Default Retain.
	// +optional
	// +kubebuilder:default=Retain
	WhenDeleted PersistentVolumeClaimRetentionPolicyType `json:"whenDeleted,omitempty"`

	// WhenScaled applies to the PVCs of ordinals removed by a scale-in: Retain or Delete.
	// Default Retain.
	// +optional
	// +kubebuilder:default=Retain
	WhenScaled PersistentVolumeClaimRetentionPolicyType `json:"whenScaled,omitempty"`
}

// StatefulSetOrdinals sets how pod ordinals are numbered.
type StatefulSetOrdinals struct {
	// Start is the ordinal of the first pod; pods are numbered start to start+replicas-1.
	// Default 0.
	// +optional
	Start int32 `json:"start" protobuf:"varint,1,opt,name=start"`
}

// VolumeClaimStatus reports how far the PVCs of one volume claim template follow it.
type VolumeClaimStatus struct {
	// VolumeClaimName is the name of the volume claim template.
	// +required
	VolumeClaimName string `json:"volumeClaimName"`
	// CompatibleReplicas is the number of pods whose PVC requests at least the storage the
	// template asks for.
	// +required
	CompatibleReplicas int32 `json:"compatibleReplicas"`
	// CompatibleReadyReplicas is the number of those pods whose PVC also has that capacity.
	// +required
	CompatibleReadyReplicas int32 `json:"compatibleReadyReplicas"`
}

// StatefulSetStatus is the observed state of an Advanced StatefulSet.
type StatefulSetStatus struct {
	// ObservedGeneration is the metadata.generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Replicas is the number of pods the StatefulSet owns.
	// +required
	Replicas int32 `json:"replicas"`

	// ReadyReplicas is the number of owned pods that are ready.
	// +required
	ReadyReplicas int32 `json:"readyReplicas"`

	// AvailableReplicas is the number of owned pods ready for at least minReadySeconds.
	// +required
	AvailableReplicas int32 `json:"availableReplicas"`

	// CurrentReplicas is the number of owned pods at currentRevision.
	// +required
	CurrentReplicas int32 `json:"currentReplicas"`

	// UpdatedReplicas is the number of owned pods at updateRevision.
	// +required
	UpdatedReplicas int32 `json:"updatedReplicas"`

	// UpdatedReadyReplicas is the number of pods at updateRevision that are ready.
	// +optional
	UpdatedReadyReplicas int32 `json:"updatedReadyReplicas,omitempty"`

	// UpdatedAvailableReplicas is the number of pods at updateRevision ready for at least
	// minReadySeconds.
	// +optional
	UpdatedAvailableReplicas int32 `json:"updatedAvailableReplicas,omitempty"`

	// CurrentRevision is the name of the ControllerRevision the not yet updated pods are at.
	// +optional
	CurrentRevision string `json:"currentRevision,omitempty"`

	// UpdateRevision is the name of the ControllerRevision of the current template.
	// +optional
	UpdateRevision string `json:"updateRevision,omitempty"`

	// CollisionCount counts hash collisions of revision names; the controller mixes it into
	// the next revision name to avoid them.
	// +optional
	CollisionCount *int32 `json:"collisionCount,omitempty"`

	// Conditions report failures to create or update pods.
	// +optional
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []appsv1.StatefulSetCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// LabelSelector is spec.selector in string form, for the scale subresource (HPA).
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`

	// VolumeClaims reports, per volume claim template, how many pods' PVCs follow it.
	// +optional
	VolumeClaims []VolumeClaimStatus `json:"volumeClaims,omitempty"`
}

// StatefulSet (Advanced StatefulSet) runs pods with stable names and storage, like the
// built-in StatefulSet, with in-place updates, parallel and unordered rolling updates,
// reserved ordinals, scale rate limits and lifecycle hooks. This version is the one stored.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.labelSelector
// +kubebuilder:resource:shortName=sts;asts,scope=Namespaced
// +kubebuilder:printcolumn:name="DESIRED",type="integer",JSONPath=".spec.replicas",description="Desired number of pods."
// +kubebuilder:printcolumn:name="CURRENT",type="integer",JSONPath=".status.replicas",description="All pods owned."
// +kubebuilder:printcolumn:name="UPDATED",type="integer",JSONPath=".status.updatedReplicas",description="Pods at the update revision."
// +kubebuilder:printcolumn:name="READY",type="integer",JSONPath=".status.readyReplicas",description="Pods that are ready."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation."
// +kubebuilder:printcolumn:name="CONTAINERS",type="string",priority=1,JSONPath=".spec.template.spec.containers[*].name",description="Container names of the pod template."
// +kubebuilder:printcolumn:name="IMAGES",type="string",priority=1,JSONPath=".spec.template.spec.containers[*].image",description="Container images of the pod template."
type StatefulSet struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec StatefulSetSpec `json:"spec,omitempty"`
	// Status is the observed state, written by the controller.
	// +optional
	Status StatefulSetStatus `json:"status,omitempty"`
}

// StatefulSetList is a list of Advanced StatefulSets.
//
// +kubebuilder:object:root=true
type StatefulSetList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the StatefulSets.
	Items []StatefulSet `json:"items"`
}

func init() {
	SchemeBuilder.Register(&StatefulSet{}, &StatefulSetList{})
}
