package v1alpha1

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
)

// UpdateStrategyType is how a UnitedDeployment rolls a template change out to its subsets.
// +kubebuilder:validation:Enum=Manual
type UpdateStrategyType string

const (
	// ManualUpdateStrategyType lets the user pace the rollout with a partition per subset.
	ManualUpdateStrategyType UpdateStrategyType = "Manual"
)

// UnitedDeploymentConditionType names a UnitedDeployment condition.
type UnitedDeploymentConditionType string

const (
	// SubsetProvisioned is True when every subset workload in the topology exists and no
	// workload of a removed subset is left.
	SubsetProvisioned UnitedDeploymentConditionType = "SubsetProvisioned"
	// SubsetUpdated is True when every subset workload carries the current template.
	SubsetUpdated UnitedDeploymentConditionType = "SubsetUpdated"
	// SubsetFailure is True when reconciling one of the subset workloads failed.
	SubsetFailure UnitedDeploymentConditionType = "SubsetFailure"
)

// UnitedDeploymentSpec is the desired state of a UnitedDeployment.
//
// +kubebuilder:validation:XValidation:rule="has(self.template) && [has(self.template.statefulSetTemplate), has(self.template.advancedStatefulSetTemplate), has(self.template.cloneSetTemplate), has(self.template.deploymentTemplate)].filter(x, x).size() == 1",message="spec.template must set exactly one of statefulSetTemplate, advancedStatefulSetTemplate, cloneSetTemplate or deploymentTemplate",fieldPath=".template"
type UnitedDeploymentSpec struct {
	// Replicas is the total number of pods across all subsets. When unset, every subset must
	// set its own replicas.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// Selector picks the pods of all subsets. It must match the labels of the template.
	// +required
	// +kubebuilder:validation:XValidation:rule="(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)",message="spec.selector must have at least one matchLabels entry or matchExpressions term"
	Selector *metav1.LabelSelector `json:"selector"`

	// Template is the workload every subset is created from; set exactly one of its fields.
	// +optional
	Template SubsetTemplate `json:"template,omitempty"`

	// Topology lists the subsets and how pods are spread over them.
	// +optional
	Topology Topology `json:"topology,omitempty"`

	// UpdateStrategy tunes how a template change reaches the subsets.
	// +optional
	// +kubebuilder:default={}
	UpdateStrategy UnitedDeploymentUpdateStrategy `json:"updateStrategy,omitempty"`

	// RevisionHistoryLimit is how many old ControllerRevisions are kept. Default 10.
	// +optional
	// +kubebuilder:default=10
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`
}

// SubsetTemplate holds the workload template of the subsets; exactly one field is set, and
// every subset is a workload of that kind.
type SubsetTemplate struct {
	// StatefulSetTemplate makes each subset a built-in apps/v1 StatefulSet.
	// +optional
	StatefulSetTemplate *StatefulSetTemplateSpec `json:"statefulSetTemplate,omitempty"`

	// AdvancedStatefulSetTemplate makes each subset an Advanced StatefulSet.
	// +optional
	AdvancedStatefulSetTemplate *AdvancedStatefulSetTemplateSpec `json:"advancedStatefulSetTemplate,omitempty"`

	// CloneSetTemplate makes each subset a CloneSet.
	// +optional
	CloneSetTemplate *CloneSetTemplateSpec `json:"cloneSetTemplate,omitempty"`

	// DeploymentTemplate makes each subset a built-in apps/v1 Deployment.
	// +optional
	DeploymentTemplate *DeploymentTemplateSpec `json:"deploymentTemplate,omitempty"`
}

// StatefulSetTemplateSpec is the template of a built-in StatefulSet subset. Leave
// spec.replicas and the rolling update partition unset: the UnitedDeployment sets them.
type StatefulSetTemplateSpec struct {
	// Metadata holds the labels and annotations of the subset workloads.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the apps/v1 StatefulSet spec of the subsets.
	// +required
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Spec appsv1.StatefulSetSpec `json:"spec"`
}

// AdvancedStatefulSetTemplateSpec is the template of an Advanced StatefulSet subset. Leave
// spec.replicas and the rolling update partition unset: the UnitedDeployment sets them.
type AdvancedStatefulSetTemplateSpec struct {
	// Metadata holds the labels and annotations of the subset workloads.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the Advanced StatefulSet spec of the subsets.
	// +required
	Spec v1beta1.StatefulSetSpec `json:"spec"`
}

// CloneSetTemplateSpec is the template of a CloneSet subset. Leave spec.replicas and the
// update partition unset: the UnitedDeployment sets them.
type CloneSetTemplateSpec struct {
	// Metadata holds the labels and annotations of the subset workloads.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the CloneSet spec of the subsets.
	// +required
	Spec CloneSetSpec `json:"spec"`
}

// DeploymentTemplateSpec is the template of a built-in Deployment subset. Leave
// spec.replicas unset: the UnitedDeployment sets it.
type DeploymentTemplateSpec struct {
	// Metadata holds the labels and annotations of the subset workloads.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the apps/v1 Deployment spec of the subsets.
	// +required
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Spec appsv1.DeploymentSpec `json:"spec"`
}

// UnitedDeploymentUpdateStrategy tunes rollouts.
type UnitedDeploymentUpdateStrategy struct {
	// Type is the rollout strategy; Manual is the only one. Default Manual.
	// +optional
	// +kubebuilder:default=Manual
	Type UpdateStrategyType `json:"type,omitempty"`

	// ManualUpdate holds the parameters of the Manual strategy. Default empty: no partition.
	// +optional
	// +kubebuilder:default={}
	ManualUpdate *ManualUpdate `json:"manualUpdate,omitempty"`
}

// ManualUpdate paces a rollout subset by subset.
type ManualUpdate struct {
	// Partitions maps a subset name to the partition of its workload: the number of its pods
	// kept at the old revision (for StatefulSet kinds, the ordinal below which pods are kept).
	// A subset not listed is updated fully.
	// +optional
	Partitions map[string]int32 `json:"partitions,omitempty"`
}

// Topology describes the subsets and how pods are spread over them.
type Topology struct {
	// Subsets lists the subsets; each becomes one workload named
	// <uniteddeployment>-<subset>-<suffix>. The order matters: minReplicas are satisfied and
	// pods are placed in list order.
	// +optional
	// +patchMergeKey=name
	// +patchStrategy=merge
	Subsets []Subset `json:"subsets,omitempty" patchStrategy:"merge" patchMergeKey:"name"`

	// ScheduleStrategy says whether pods that cannot be scheduled in their subset may move to
	// another one.
	// +optional
	ScheduleStrategy UnitedDeploymentScheduleStrategy `json:"scheduleStrategy,omitempty"`
}

// Subset is one group of nodes and the share of pods it runs.
type Subset struct {
	// Name identifies the subset; a DNS label, unique within the UnitedDeployment.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// NodeSelectorTerm is added to the required node affinity of the subset's pods. It
	// cannot be changed for an existing subset.
	// +optional
	NodeSelectorTerm corev1.NodeSelectorTerm `json:"nodeSelectorTerm,omitempty"`

	// Tolerations are added to the subset's pods. They cannot be changed for an existing
	// subset.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Replicas is the number of pods of this subset, or a percentage of spec.replicas. When
	// unset the controller shares the remaining pods evenly among the subsets without
	// replicas. Cannot be combined with minReplicas or maxReplicas in the same
	// UnitedDeployment.
	// +optional
	Replicas *intstr.IntOrString `json:"replicas,omitempty"`

	// MinReplicas is the least number of pods, or percentage of spec.replicas, this subset
	// runs; subsets are filled to their minimum in list order. Default 0 when any subset sets
	// minReplicas or maxReplicas.
	// +optional
	MinReplicas *intstr.IntOrString `json:"minReplicas,omitempty"`

	// MaxReplicas is the most pods, or percentage of spec.replicas, this subset runs. Unset
	// means no limit; at least one subset must leave it unset.
	// +optional
	MaxReplicas *intstr.IntOrString `json:"maxReplicas,omitempty"`

	// Patch is a strategic merge patch on the pod template (metadata and spec) of this
	// subset's workload, for example to give its pods other labels or resources. Where it
	// touches the same fields as nodeSelectorTerm or tolerations, the patch wins.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Patch runtime.RawExtension `json:"patch,omitempty"`
}

// UnitedDeploymentScheduleStrategyType is how pods are bound to subsets.
// +kubebuilder:validation:Enum=Adaptive;Fixed;""
type UnitedDeploymentScheduleStrategyType string

const (
	// AdaptiveUnitedDeploymentScheduleStrategyType moves pods that stay unschedulable in one
	// subset to a later subset with room, and marks the full subset unschedulable for a while.
	AdaptiveUnitedDeploymentScheduleStrategyType UnitedDeploymentScheduleStrategyType = "Adaptive"
	// FixedUnitedDeploymentScheduleStrategyType keeps pods in their subset even when they
	// cannot be scheduled there.
	FixedUnitedDeploymentScheduleStrategyType UnitedDeploymentScheduleStrategyType = "Fixed"
)

// Defaults of the Adaptive schedule strategy.
const (
	// DefaultRescheduleCriticalDuration is rescheduleCriticalSeconds when unset.
	DefaultRescheduleCriticalDuration = 30 * time.Second
	// DefaultUnschedulableStatusLastDuration is unschedulableLastSeconds when unset.
	DefaultUnschedulableStatusLastDuration = 300 * time.Second
)

// UnitedDeploymentScheduleStrategy tunes how pods are bound to subsets.
type UnitedDeploymentScheduleStrategy struct {
	// Type is Fixed or Adaptive. Unset means Fixed.
	// +optional
	Type UnitedDeploymentScheduleStrategyType `json:"type,omitempty"`

	// Adaptive tunes the Adaptive type.
	// +optional
	Adaptive *AdaptiveUnitedDeploymentStrategy `json:"adaptive,omitempty"`
}

// AdaptiveUnitedDeploymentStrategy tunes the Adaptive schedule strategy.
type AdaptiveUnitedDeploymentStrategy struct {
	// RescheduleCriticalSeconds is how long, in seconds, a pod may stay unschedulable in its
	// subset before it is moved to the next subset with room. Default 30.
	// +optional
	RescheduleCriticalSeconds *int32 `json:"rescheduleCriticalSeconds,omitempty"`

	// UnschedulableLastSeconds is how long, in seconds, a subset that could not schedule a
	// pod is treated as full before it gets new pods again. Default 300.
	// +optional
	UnschedulableLastSeconds *int32 `json:"unschedulableLastSeconds,omitempty"`
}

// IsAdaptive tells whether the Adaptive type is chosen.
func (s *UnitedDeploymentScheduleStrategy) IsAdaptive() bool {
	return s.Type == AdaptiveUnitedDeploymentScheduleStrategyType
}

// GetRescheduleCriticalDuration returns rescheduleCriticalSeconds as a duration, or its default.
func (s *UnitedDeploymentScheduleStrategy) GetRescheduleCriticalDuration() time.Duration {
	if s.Adaptive == nil || s.Adaptive.RescheduleCriticalSeconds == nil {
		return DefaultRescheduleCriticalDuration
	}
	return time.Duration(*s.Adaptive.RescheduleCriticalSeconds) * time.Second
}

// GetUnschedulableLastDuration returns unschedulableLastSeconds as a duration, or its default.
func (s *UnitedDeploymentScheduleStrategy) GetUnschedulableLastDuration() time.Duration {
	if s.Adaptive == nil || s.Adaptive.UnschedulableLastSeconds == nil {
		return DefaultUnschedulableStatusLastDuration
	}
	return time.Duration(*s.Adaptive.UnschedulableLastSeconds) * time.Second
}

// UnitedDeploymentStatus is the observed state of a UnitedDeployment.
type UnitedDeploymentStatus struct {
	// ObservedGeneration is the metadata.generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// ReadyReplicas is the number of ready pods across all subsets.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// Replicas is the number of pods across all subsets.
	// +required
	Replicas int32 `json:"replicas"`

	// UpdatedReplicas is the number of pods at the current revision.
	// +required
	UpdatedReplicas int32 `json:"updatedReplicas"`

	// UpdatedReadyReplicas is the number of ready pods at the current revision.
	// +optional
	UpdatedReadyReplicas int32 `json:"updatedReadyReplicas,omitempty"`

	// CollisionCount counts hash collisions of revision names; the controller mixes it into
	// the next revision name to avoid them.
	// +optional
	CollisionCount *int32 `json:"collisionCount,omitempty"`

	// CurrentRevision is the name of the ControllerRevision of the current template.
	// +required
	CurrentRevision string `json:"currentRevision"`

	// SubsetReplicas maps each subset name to the number of pods assigned to it.
	// +optional
	SubsetReplicas map[string]int32 `json:"subsetReplicas,omitempty"`

	// SubsetStatuses report per-subset state, such as whether it can schedule pods.
	// +optional
	SubsetStatuses []UnitedDeploymentSubsetStatus `json:"subsetStatuses,omitempty"`

	// Conditions report provisioning, update and failure state.
	// +optional
	Conditions []UnitedDeploymentCondition `json:"conditions,omitempty"`

	// UpdateStatus reports the rollout progress.
	// +optional
	UpdateStatus *UpdateStatus `json:"updateStatus,omitempty"`

	// LabelSelector is spec.selector in string form, for the scale subresource (HPA).
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
}

// GetSubsetStatus returns the status entry of the named subset, or nil.
func (s *UnitedDeploymentStatus) GetSubsetStatus(subset string) *UnitedDeploymentSubsetStatus {
	for i := range s.SubsetStatuses {
		if s.SubsetStatuses[i].Name == subset {
			return &s.SubsetStatuses[i]
		}
	}
	return nil
}

// InitSubsetStatuses adds an empty status entry for every subset of the topology that has none.
func (u *UnitedDeployment) InitSubsetStatuses() {
	for _, subset := range u.Spec.Topology.Subsets {
		if u.Status.GetSubsetStatus(subset.Name) == nil {
			u.Status.SubsetStatuses = append(u.Status.SubsetStatuses, UnitedDeploymentSubsetStatus{Name: subset.Name})
		}
	}
}

// UnitedDeploymentCondition is one observation about a UnitedDeployment.
type UnitedDeploymentCondition struct {
	// Type names the condition.
	// +optional
	Type UnitedDeploymentConditionType `json:"type,omitempty"`
	// Status is True, False or Unknown.
	// +optional
	Status corev1.ConditionStatus `json:"status,omitempty"`
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

// UpdateStatus reports rollout progress.
type UpdateStatus struct {
	// UpdatedRevision is the name of the ControllerRevision being rolled out.
	// +optional
	UpdatedRevision string `json:"updatedRevision,omitempty"`

	// CurrentPartitions maps each subset name to the partition its workload has now.
	// +optional
	CurrentPartitions map[string]int32 `json:"currentPartitions,omitempty"`
}

// UnitedDeploymentSubsetConditionType names a per-subset condition.
type UnitedDeploymentSubsetConditionType string

const (
	// UnitedDeploymentSubsetSchedulable is False while the subset is treated as full because
	// a pod could not be scheduled in it.
	UnitedDeploymentSubsetSchedulable UnitedDeploymentSubsetConditionType = "Schedulable"
)

// UnitedDeploymentSubsetStatus is the state of one subset.
type UnitedDeploymentSubsetStatus struct {
	// Name is the subset name from spec.topology.subsets.
	// +optional
	Name string `json:"name,omitempty"`
	// Replicas is the number of pods the subset workload has (its status.replicas).
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Partition is the subset's partition: updateStrategy.manualUpdate.partitions, capped at
	// the subset's replicas.
	// +optional
	Partition int32 `json:"partition,omitempty"`
	// Conditions are the observations about the subset.
	// +optional
	Conditions []UnitedDeploymentSubsetCondition `json:"conditions,omitempty"`
}

// GetCondition returns a copy of the condition of the given type, or nil.
func (s *UnitedDeploymentSubsetStatus) GetCondition(condType UnitedDeploymentSubsetConditionType) *UnitedDeploymentSubsetCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == condType {
			c := s.Conditions[i]
			return &c
		}
	}
	return nil
}

// SetCondition records a condition, touching lastTransitionTime only when status or reason
// changes.
func (s *UnitedDeploymentSubsetStatus) SetCondition(condType UnitedDeploymentSubsetConditionType, status corev1.ConditionStatus, reason, message string) {
	var cur *UnitedDeploymentSubsetCondition
	for i := range s.Conditions {
		if s.Conditions[i].Type == condType {
			cur = &s.Conditions[i]
			break
		}
	}
	if cur != nil && cur.Status == status && cur.Reason == reason {
		return
	}
	if cur == nil {
		s.Conditions = append(s.Conditions, UnitedDeploymentSubsetCondition{Type: condType})
		cur = &s.Conditions[len(s.Conditions)-1]
	}
	cur.LastTransitionTime = metav1.Now()
	cur.Status = status
	cur.Reason = reason
	cur.Message = message
}

// UnitedDeploymentSubsetCondition is one observation about a subset.
type UnitedDeploymentSubsetCondition struct {
	// Type names the condition.
	// +required
	Type UnitedDeploymentSubsetConditionType `json:"type"`
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

// UnitedDeployment runs one workload template as several subset workloads, one per group of
// nodes (zones, node pools), and spreads a total replica count over them.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.labelSelector
// +kubebuilder:resource:shortName=ud,scope=Namespaced
// +kubebuilder:printcolumn:name="DESIRED",type="integer",JSONPath=".spec.replicas",description="Desired number of pods."
// +kubebuilder:printcolumn:name="CURRENT",type="integer",JSONPath=".status.replicas",description="All pods across subsets."
// +kubebuilder:printcolumn:name="UPDATED",type="integer",JSONPath=".status.updatedReplicas",description="Pods at the current revision."
// +kubebuilder:printcolumn:name="READY",type="integer",JSONPath=".status.readyReplicas",description="Pods that are ready."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation."
type UnitedDeployment struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec UnitedDeploymentSpec `json:"spec,omitempty"`
	// Status is the observed state, written by the controller.
	// +optional
	Status UnitedDeploymentStatus `json:"status,omitempty"`
}

// UnitedDeploymentList is a list of UnitedDeployments.
//
// +kubebuilder:object:root=true
type UnitedDeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the UnitedDeployments.
	Items []UnitedDeployment `json:"items"`
}

func init() {
	SchemeBuilder.Register(&UnitedDeployment{}, &UnitedDeploymentList{})
}
