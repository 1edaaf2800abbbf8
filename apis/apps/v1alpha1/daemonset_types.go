package v1alpha1

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
)

// DefaultDaemonSetUniqueLabelKey is the pod label whose value names the ControllerRevision a
// DaemonSet pod was created from; it tells old pods from new ones during an update.
const DefaultDaemonSetUniqueLabelKey = ControllerRevisionHashLabelKey

// ProgressiveCreatePodAnnotation, set to "true" on a DaemonSet, makes a non-zero
// rollingUpdate.partition also hold back the creation of pods on nodes that have none: only
// desired nodes minus updated pods minus partition get one, the first by node name.
const ProgressiveCreatePodAnnotation = "daemonset.kruise.io/progressive-create-pod"

// DaemonSetSpec is the desired state of an Advanced DaemonSet.
type DaemonSetSpec struct {
	// Selector picks the pods this DaemonSet owns. It must not be empty and must match the
	// labels of the template.
	// +required
	// +kubebuilder:validation:XValidation:rule="(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)",message="spec.selector must have at least one matchLabels entry or matchExpressions term"
	Selector *metav1.LabelSelector `json:"selector"`

	// Template is the pod created on every node that matches the template's node selector
	// and affinity (every schedulable node when there is none). Its restartPolicy must be
	// Always.
	// +required
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Template corev1.PodTemplateSpec `json:"template"`

	// UpdateStrategy tunes how pods are replaced when the template changes. When it is left
	// out entirely it defaults to a rolling update of the Standard kind, one node at a time
	// (maxUnavailable 1, maxSurge 0).
	// +optional
	// +kubebuilder:default={type: RollingUpdate, rollingUpdate: {rollingUpdateType: Standard, maxUnavailable: 1, maxSurge: 0}}
	UpdateStrategy DaemonSetUpdateStrategy `json:"updateStrategy,omitempty"`

	// MinReadySeconds is how long, in seconds, a new pod must stay ready with no container
	// crashing before it counts as available. Default 0: available as soon as ready.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`

	// BurstReplicas caps how many pods the controller creates in one reconcile pass, so
	// that a large cluster is not flooded at once: a number of pods or a percentage of the
	// nodes that should run one. Default 250.
	// +optional
	// +kubebuilder:default=250
	BurstReplicas *intstr.IntOrString `json:"burstReplicas,omitempty"`

	// RevisionHistoryLimit is how many old ControllerRevisions are kept for rollback.
	// Default 10.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=0
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`

	// Lifecycle holds pods at chosen points until the user's own controller releases them.
	// A DaemonSet supports the preDelete and preNormal hooks; inPlaceUpdate is refused.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.inPlaceUpdate)",message="spec.lifecycle.inPlaceUpdate is not supported by DaemonSet; use preDelete or preNormal"
	Lifecycle *appspub.Lifecycle `json:"lifecycle,omitempty"`
}

// DaemonSetUpdateStrategyType is how a DaemonSet replaces its pods.
// +kubebuilder:validation:Enum=RollingUpdate;OnDelete
type DaemonSetUpdateStrategyType string

const (
	// RollingUpdateDaemonSetStrategyType replaces pods node by node, within the limits of
	// rollingUpdate.
	RollingUpdateDaemonSetStrategyType DaemonSetUpdateStrategyType = "RollingUpdate"
	// OnDeleteDaemonSetStrategyType creates a pod of the new revision only after the old
	// one has been deleted by someone else.
	OnDeleteDaemonSetStrategyType DaemonSetUpdateStrategyType = "OnDelete"
)

// DaemonSetUpdateStrategy tunes updates.
type DaemonSetUpdateStrategy struct {
	// Type is RollingUpdate or OnDelete. Default RollingUpdate.
	// +optional
	// +kubebuilder:default=RollingUpdate
	Type DaemonSetUpdateStrategyType `json:"type,omitempty"`

	// RollingUpdate tunes a RollingUpdate; it is ignored for OnDelete.
	// +optional
	RollingUpdate *RollingUpdateDaemonSet `json:"rollingUpdate,omitempty"`
}

// RollingUpdateType is how each pod is moved to the new revision during a rolling update.
// +kubebuilder:validation:Enum=Standard;InPlaceIfPossible;Surging
type RollingUpdateType string

const (
	// StandardRollingUpdateType deletes and recreates each pod, the way the built-in
	// DaemonSet does (creating the new pod first when maxSurge is above 0).
	StandardRollingUpdateType RollingUpdateType = "Standard"
	// InplaceRollingUpdateType updates a pod in place when only fields that can change in
	// place differ (images, metadata) and recreates it otherwise. maxSurge must be 0.
	InplaceRollingUpdateType RollingUpdateType = "InPlaceIfPossible"
	// DeprecatedSurgingRollingUpdateType is an old spelling of Standard with a surge of one
	// pod and no unavailable pod. It is still accepted; write Standard with maxSurge instead.
	DeprecatedSurgingRollingUpdateType RollingUpdateType = "Surging"
)

// RollingUpdateDaemonSet tunes a rolling update.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.maxUnavailable) && (type(self.maxUnavailable) == int ? self.maxUnavailable != 0 : self.maxUnavailable != '0%') && has(self.maxSurge) && (type(self.maxSurge) == int ? self.maxSurge != 0 : self.maxSurge != '0%'))",message="spec.updateStrategy.rollingUpdate.maxSurge may not be set when maxUnavailable is non-zero"
// +kubebuilder:validation:XValidation:rule="!(has(self.rollingUpdateType) && self.rollingUpdateType == 'InPlaceIfPossible' && has(self.maxSurge) && (type(self.maxSurge) == int ? self.maxSurge != 0 : self.maxSurge != '0%'))",message="spec.updateStrategy.rollingUpdate.maxSurge must be 0 when rollingUpdateType is InPlaceIfPossible"
type RollingUpdateDaemonSet struct {
	// Type is how each pod is updated: Standard, InPlaceIfPossible, or the deprecated
	// Surging. Default Standard.
	// +optional
	// +kubebuilder:default=Standard
	Type RollingUpdateType `json:"rollingUpdateType,omitempty"`

	// MaxUnavailable is the most pods that may be unavailable at once during the update: a
	// number, or a percentage (at most 100%) of status.desiredNumberScheduled rounded up.
	// It cannot be 0 when maxSurge is 0, and must be 0 when maxSurge is set. When neither
	// is set the update takes one node at a time (maxUnavailable 1).
	// +optional
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : (self.matches('^[0-9]+%$') && int(self.substring(0, size(self) - 1)) <= 100)",message="spec.updateStrategy.rollingUpdate.maxUnavailable must be a non-negative number or a percentage from 0% to 100%"
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// MaxSurge is the most nodes that may run an extra pod of the new revision, next to the
	// old one, while it becomes available: a number, or a percentage (at most 100%) of
	// status.desiredNumberScheduled rounded up. Default 0. The old pod is deleted once the
	// new one is available. It cannot be 0 when maxUnavailable is 0.
	// +optional
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : (self.matches('^[0-9]+%$') && int(self.substring(0, size(self) - 1)) <= 100)",message="spec.updateStrategy.rollingUpdate.maxSurge must be a non-negative number or a percentage from 0% to 100%"
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// Selector limits the update to pods on nodes whose labels match; pods on other nodes
	// keep their revision. Changing it lets an update proceed in node batches.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// Partition is the number of pods to keep at their old revision; the update stops once
	// only that many are left. Default 0: update all. A value of
	// status.desiredNumberScheduled or more updates nothing.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Partition *int32 `json:"partition,omitempty"`

	// Paused stops the rolling update (new nodes still get pods) while true. Default false.
	// +optional
	Paused *bool `json:"paused,omitempty"`
}

// DaemonSetStatus is the observed state of a DaemonSet.
type DaemonSetStatus struct {
	// CurrentNumberScheduled is the number of nodes that should run the pod and run at
	// least one.
	// +required
	CurrentNumberScheduled int32 `json:"currentNumberScheduled"`

	// NumberMisscheduled is the number of nodes that run the pod but should not.
	// +required
	NumberMisscheduled int32 `json:"numberMisscheduled"`

	// DesiredNumberScheduled is the number of nodes that should run the pod, including
	// those that already do.
	// +required
	DesiredNumberScheduled int32 `json:"desiredNumberScheduled"`

	// NumberReady is the number of nodes that should run the pod and have at least one
	// ready.
	// +required
	NumberReady int32 `json:"numberReady"`

	// ObservedGeneration is the metadata.generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// UpdatedNumberScheduled is the number of nodes that run a pod of the current revision.
	// +required
	UpdatedNumberScheduled int32 `json:"updatedNumberScheduled"`

	// NumberAvailable is the number of nodes that should run the pod and have at least one
	// ready for minReadySeconds.
	// +optional
	NumberAvailable int32 `json:"numberAvailable,omitempty"`

	// NumberUnavailable is the number of nodes that should run the pod and have none
	// available.
	// +optional
	NumberUnavailable int32 `json:"numberUnavailable,omitempty"`

	// CollisionCount counts hash collisions of revision names; the controller mixes it into
	// the next revision name to avoid them.
	// +optional
	CollisionCount *int32 `json:"collisionCount,omitempty"`

	// Conditions are the latest observations of the DaemonSet's state.
	// +optional
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []appsv1.DaemonSetCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// DaemonSetHash is the controller-revision-hash of the current revision of the template.
	// +required
	DaemonSetHash string `json:"daemonSetHash"`
}

// DaemonSet runs one pod on each selected node, like the built-in DaemonSet, with in-place
// updates, surge, node-selector batches, partitions, pausing and lifecycle hooks.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=daemon;ads,scope=Namespaced
// +kubebuilder:printcolumn:name="DESIRED",type="integer",JSONPath=".status.desiredNumberScheduled",description="Nodes that should run the pod."
// +kubebuilder:printcolumn:name="CURRENT",type="integer",JSONPath=".status.currentNumberScheduled",description="Nodes that should run the pod and run one."
// +kubebuilder:printcolumn:name="READY",type="integer",JSONPath=".status.numberReady",description="Nodes with a ready pod."
// +kubebuilder:printcolumn:name="UP-TO-DATE",type="integer",JSONPath=".status.updatedNumberScheduled",description="Nodes with a pod of the current revision."
// +kubebuilder:printcolumn:name="AVAILABLE",type="integer",JSONPath=".status.numberAvailable",description="Nodes with an available pod."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation."
// +kubebuilder:printcolumn:name="CONTAINERS",type="string",priority=1,JSONPath=".spec.template.spec.containers[*].name",description="Container names of the pod template."
// +kubebuilder:printcolumn:name="IMAGES",type="string",priority=1,JSONPath=".spec.template.spec.containers[*].image",description="Container images of the pod template."
type DaemonSet struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec DaemonSetSpec `json:"spec,omitempty"`
	// Status is the observed state, written by the controller.
	// +optional
	Status DaemonSetStatus `json:"status,omitempty"`
}

// DaemonSetList is a list of DaemonSets.
//
// +kubebuilder:object:root=true
type DaemonSetList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the DaemonSets.
	Items []DaemonSet `json:"items"`
}

func init() {
	SchemeBuilder.Register(&DaemonSet{}, &DaemonSetList{})
}
