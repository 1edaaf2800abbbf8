package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Pod annotations of the WorkloadSpread contract.
const (
	// MatchedWorkloadSpreadSubsetAnnotations is the pod annotation the webhook writes when it
	// places a pod in a subset: a JSON object with the WorkloadSpread "name", the "subset"
	// name and, for pods created without a name, a generated "uid".
	MatchedWorkloadSpreadSubsetAnnotations = "apps.kruise.io/matched-workloadspread"

	// WorkloadSpreadVersionIgnored is the key of status.versionedSubsetStatuses that counts
	// pods of every workload revision together, for workloads whose pods are not tracked per
	// revision.
	WorkloadSpreadVersionIgnored = "versionIgnored"
)

// Pod deletion cost values a WorkloadSpread writes into PodDeletionCostAnnotation, so that a
// scale-in removes pods of subsets over their maxReplicas (negative cost) before pods of
// subsets within it (positive cost).
const (
	// WorkloadSpreadPodDeletionCostPositive marks a pod its subset wants to keep.
	WorkloadSpreadPodDeletionCostPositive = "100"
	// WorkloadSpreadPodDeletionCostNegative marks a pod above its subset's maxReplicas.
	WorkloadSpreadPodDeletionCostNegative = "-100"
)

// TargetReference names a workload in the same namespace.
type TargetReference struct {
	// APIVersion is the group/version of the workload, e.g. apps/v1.
	// +required
	APIVersion string `json:"apiVersion"`
	// Kind is the kind of the workload, e.g. Deployment.
	// +required
	Kind string `json:"kind"`
	// Name is the name of the workload.
	// +required
	Name string `json:"name"`
}

// WorkloadSpreadSpec is the desired state of a WorkloadSpread.
type WorkloadSpreadSpec struct {
	// TargetReference is the workload whose pods are spread: a CloneSet, Deployment,
	// ReplicaSet, Job, StatefulSet (built-in or Advanced) or a workload allowed by the
	// add-on's configuration. Its group, kind and name cannot be changed.
	// +required
	// +kubebuilder:validation:XValidation:rule="self.kind == oldSelf.kind && self.name == oldSelf.name && (self.apiVersion.contains('/') ? self.apiVersion.split('/')[0] : '') == (oldSelf.apiVersion.contains('/') ? oldSelf.apiVersion.split('/')[0] : '')",message="spec.targetRef cannot be changed to another workload (group, kind and name are immutable)"
	TargetReference *TargetReference `json:"targetRef"`

	// TargetFilter narrows the target workload to some of its pods and says where to read
	// their desired number, for workloads with several roles (e.g. only the workers of a
	// training job).
	// +optional
	TargetFilter *TargetFilter `json:"targetFilter,omitempty"`

	// Subsets are the domains pods are spread over, in order of preference: a new pod goes to
	// the first subset that has room, and a scale-in removes pods from the last subsets first.
	// +required
	// +kubebuilder:validation:MinItems=1
	Subsets []WorkloadSpreadSubset `json:"subsets"`

	// ScheduleStrategy says whether pods that cannot be scheduled in their subset move to a
	// later one.
	// +optional
	ScheduleStrategy WorkloadSpreadScheduleStrategy `json:"scheduleStrategy,omitempty"`
}

// TargetFilter selects part of the pods of the target workload.
type TargetFilter struct {
	// Selector picks the pods of the workload that are spread; other pods are left alone.
	// Unset means all pods.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// ReplicasPathList are paths, in the target workload object, of integers whose sum is
	// the desired number of selected pods (e.g. spec.tfReplicaSpecs.Worker.replicas); it is
	// the base of percentage maxReplicas. Unset means the workload's own replicas.
	// +optional
	ReplicasPathList []string `json:"replicasPathList,omitempty"`
}

// WorkloadSpreadScheduleStrategyType is how a WorkloadSpread handles pods that cannot be
// scheduled in their subset.
// +kubebuilder:validation:Enum=Adaptive;Fixed;""
type WorkloadSpreadScheduleStrategyType string

const (
	// AdaptiveWorkloadSpreadScheduleStrategyType moves pods that stay unschedulable in
	// their subset to a later subset, and may check before placing a pod that the subset's
	// nodes have room for it.
	AdaptiveWorkloadSpreadScheduleStrategyType WorkloadSpreadScheduleStrategyType = "Adaptive"
	// FixedWorkloadSpreadScheduleStrategyType keeps each pod in the subset it was given.
	FixedWorkloadSpreadScheduleStrategyType WorkloadSpreadScheduleStrategyType = "Fixed"
)

// WorkloadSpreadScheduleStrategy tunes scheduling across subsets.
type WorkloadSpreadScheduleStrategy struct {
	// Type is Fixed or Adaptive. Unset (or empty) means Fixed.
	// +optional
	Type WorkloadSpreadScheduleStrategyType `json:"type,omitempty"`

	// Adaptive tunes the Adaptive type.
	// +optional
	Adaptive *AdaptiveWorkloadSpreadStrategy `json:"adaptive,omitempty"`
}

// AdaptiveWorkloadSpreadStrategy tunes the Adaptive schedule strategy.
type AdaptiveWorkloadSpreadStrategy struct {
	// DisableSimulationSchedule turns off the check, made when a pod is placed, that the
	// subset's nodes have enough free resources for it. The check is a rough one and does not
	// replace the scheduler. Default false.
	// +optional
	DisableSimulationSchedule bool `json:"disableSimulationSchedule,omitempty"`

	// RescheduleCriticalSeconds is how long, in seconds, a pod may stay unschedulable in its
	// subset before the controller deletes it so that its replacement goes to a later subset
	// with room. Unset means the controller's default.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RescheduleCriticalSeconds *int32 `json:"rescheduleCriticalSeconds,omitempty"`
}

// WorkloadSpreadSubset is one domain and what the pods placed there get.
type WorkloadSpreadSubset struct {
	// Name identifies the subset; it must be unique within the WorkloadSpread.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`

	// RequiredNodeSelectorTerm is added to the required node affinity of the subset's pods.
	// +optional
	RequiredNodeSelectorTerm *corev1.NodeSelectorTerm `json:"requiredNodeSelectorTerm,omitempty"`

	// PreferredNodeSelectorTerms are added to the preferred node affinity of the subset's
	// pods.
	// +optional
	PreferredNodeSelectorTerms []corev1.PreferredSchedulingTerm `json:"preferredNodeSelectorTerms,omitempty"`

	// Tolerations are added to the subset's pods.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// MaxReplicas is the most pods the subset holds: a number, or a percentage of the
	// workload's desired pods. Unset means no limit (usually for the last subset). All
	// subsets must use the same form, and percentages may add up to at most 100%.
	// +optional
	MaxReplicas *intstr.IntOrString `json:"maxReplicas,omitempty"`

	// Patch is a strategic merge patch applied to the subset's pods at creation, e.g. to add
	// labels or change resources: {"metadata":{"labels":{...}},"spec":{...}}.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	Patch runtime.RawExtension `json:"patch,omitempty"`
}

// WorkloadSpreadStatus is the observed state of a WorkloadSpread.
type WorkloadSpreadStatus struct {
	// ObservedGeneration is the metadata.generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// SubsetStatuses are the counts of each subset, in the order of spec.subsets.
	// +optional
	SubsetStatuses []WorkloadSpreadSubsetStatus `json:"subsetStatuses,omitempty"`

	// VersionedSubsetStatuses are the subset counts per workload revision, so that during a
	// rolling update new pods are placed by the counts of their own revision. The key is the
	// revision, or WorkloadSpreadVersionIgnored.
	// +optional
	VersionedSubsetStatuses map[string][]WorkloadSpreadSubsetStatus `json:"versionedSubsetStatuses,omitempty"`
}

// WorkloadSpreadSubsetConditionType names a subset condition.
type WorkloadSpreadSubsetConditionType string

const (
	// SubsetSchedulable is False while some pod of the subset cannot be scheduled for lack
	// of resources; the Adaptive strategy then sends new pods elsewhere. The controller sets
	// it back to True after a while.
	SubsetSchedulable WorkloadSpreadSubsetConditionType = "Schedulable"
)

// WorkloadSpreadSubsetCondition is one observation about a subset.
type WorkloadSpreadSubsetCondition struct {
	// Type names the condition.
	// +required
	Type WorkloadSpreadSubsetConditionType `json:"type"`
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

// WorkloadSpreadSubsetStatus is the observed state of one subset.
type WorkloadSpreadSubsetStatus struct {
	// Name is the subset name.
	// +required
	Name string `json:"name"`

	// Replicas is the number of active pods placed in the subset.
	// +required
	Replicas int32 `json:"replicas"`

	// Conditions are observations about the subset.
	// +optional
	Conditions []WorkloadSpreadSubsetCondition `json:"conditions,omitempty"`

	// MissingReplicas is how many more pods the subset can take: 0 when it is full, -1 when
	// it has no maxReplicas.
	// +required
	MissingReplicas int32 `json:"missingReplicas"`

	// CreatingPods maps the names of pods the webhook placed in the subset, but the
	// controller has not seen yet, to the time they were placed. Entries for pods that were
	// never created expire. It is normally empty.
	// +optional
	CreatingPods map[string]metav1.Time `json:"creatingPods,omitempty"`

	// DeletingPods maps the names of pods of the subset being deleted, but not yet seen gone
	// by the controller, to the time of the deletion.
	// +optional
	DeletingPods map[string]metav1.Time `json:"deletingPods,omitempty"`
}

// WorkloadSpread spreads the pods of one existing workload over subsets (zones, node pools,
// node types) with per-subset limits, scheduling constraints and patches, applied by the pod
// webhook at creation; it also orders scale-in by subset.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ws,scope=Namespaced
// +kubebuilder:printcolumn:name="WorkloadName",type="string",JSONPath=".spec.targetRef.name",description="Name of the target workload."
// +kubebuilder:printcolumn:name="WorkloadKind",type="string",JSONPath=".spec.targetRef.kind",description="Kind of the target workload."
// +kubebuilder:printcolumn:name="Adaptive",type="boolean",JSONPath=`.spec.scheduleStrategy.type[?(@ == "Adaptive")]`,description="Whether unschedulable pods move to later subsets."
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation."
type WorkloadSpread struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec WorkloadSpreadSpec `json:"spec,omitempty"`
	// Status is the observed state, written by the controller and the webhook.
	// +optional
	Status WorkloadSpreadStatus `json:"status,omitempty"`
}

// WorkloadSpreadList is a list of WorkloadSpreads.
//
// +kubebuilder:object:root=true
type WorkloadSpreadList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the WorkloadSpreads.
	Items []WorkloadSpread `json:"items"`
}

func init() {
	SchemeBuilder.Register(&WorkloadSpread{}, &WorkloadSpreadList{})
}
