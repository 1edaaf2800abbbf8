package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Annotations the ResourceDistribution controller writes on the copies it creates.
const (
	// ResourceDistributionHashCodeAnnotation holds a hash of spec.resource; a copy whose hash
	// differs is out of date and is rewritten.
	ResourceDistributionHashCodeAnnotation = "kruise.io/resourcedistribution.resource.hashcode"

	// ResourceDistributionSourceAnnotation holds the name of the ResourceDistribution that owns
	// the copy. An object of the same name without it is a conflict and is left untouched.
	ResourceDistributionSourceAnnotation = "kruise.io/resourcedistribution.resource.from"
)

// ResourceDistributionSpec is the desired state of a ResourceDistribution.
type ResourceDistributionSpec struct {
	// Resource is the complete object (apiVersion, kind, metadata and the rest) to create in
	// each target namespace: a v1 Secret or ConfigMap with a name. Its namespace is ignored.
	// Its apiVersion, kind and name cannot be changed.
	// +required
	// +kubebuilder:validation:XValidation:rule="self.apiVersion == 'v1' && (self.kind == 'Secret' || self.kind == 'ConfigMap')",message="spec.resource must be a v1 Secret or ConfigMap"
	// +kubebuilder:validation:XValidation:rule="has(self.metadata) && has(self.metadata.name) && self.metadata.name != ''",message="spec.resource.metadata.name is required"
	// +kubebuilder:validation:XValidation:rule="self.apiVersion == oldSelf.apiVersion && self.kind == oldSelf.kind && (has(self.metadata) && has(self.metadata.name) ? self.metadata.name : '') == (has(oldSelf.metadata) && has(oldSelf.metadata.name) ? oldSelf.metadata.name : '')",message="spec.resource apiVersion, kind and metadata.name are immutable"
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:EmbeddedResource
	Resource runtime.RawExtension `json:"resource"`

	// Targets selects the namespaces the resource is copied into.
	// +required
	Targets ResourceDistributionTargets `json:"targets"`
}

// ResourceDistributionTargets selects namespaces. The namespaces chosen by allNamespaces,
// includedNamespaces and namespaceLabelSelector are added up; excludedNamespaces are then
// removed from the result.
type ResourceDistributionTargets struct {
	// AllNamespaces, when true, selects every namespace except the ones the add-on never
	// writes into (such as kube-system and kube-public). Default false.
	// +optional
	AllNamespaces bool `json:"allNamespaces,omitempty"`

	// ExcludedNamespaces are never selected, whatever the other fields say.
	// +optional
	ExcludedNamespaces ResourceDistributionTargetNamespaces `json:"excludedNamespaces,omitempty"`

	// IncludedNamespaces are selected by name.
	// +optional
	IncludedNamespaces ResourceDistributionTargetNamespaces `json:"includedNamespaces,omitempty"`

	// NamespaceLabelSelector selects the namespaces whose labels match. An empty selector
	// selects none.
	// +optional
	NamespaceLabelSelector metav1.LabelSelector `json:"namespaceLabelSelector,omitempty"`
}

// ResourceDistributionTargetNamespaces is a list of namespaces.
type ResourceDistributionTargetNamespaces struct {
	// List names the namespaces.
	// +optional
	// +patchMergeKey=name
	// +patchStrategy=merge
	List []ResourceDistributionNamespace `json:"list,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
}

// ResourceDistributionNamespace is a namespace name.
type ResourceDistributionNamespace struct {
	// Name is the namespace name.
	// +optional
	Name string `json:"name,omitempty"`
}

// ResourceDistributionStatus is the observed state of a ResourceDistribution, written by the
// controller; changes made by others are overwritten.
type ResourceDistributionStatus struct {
	// Desired is the number of target namespaces.
	// +optional
	Desired int32 `json:"desired,omitempty"`

	// Succeeded is the number of target namespaces holding an up-to-date copy.
	// +optional
	Succeeded int32 `json:"succeeded,omitempty"`

	// Failed is the number of target namespaces where creating or updating the copy failed.
	// +optional
	Failed int32 `json:"failed,omitempty"`

	// ObservedGeneration is the metadata.generation the conditions were computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions report the failures of the last pass, one condition per kind of failure.
	// +optional
	Conditions []ResourceDistributionCondition `json:"conditions,omitempty"`
}

// ResourceDistributionCondition is one observation about a ResourceDistribution.
type ResourceDistributionCondition struct {
	// Type names the condition.
	// +required
	Type ResourceDistributionConditionType `json:"type"`

	// Status is True, False or Unknown.
	// +required
	Status ResourceDistributionConditionStatus `json:"status"`

	// LastTransitionTime is when Status last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`

	// Reason explains the last change to a human.
	// +optional
	Reason string `json:"reason,omitempty"`

	// FailedNamespaces lists the namespaces concerned when Status is False.
	// +optional
	FailedNamespaces []string `json:"failedNamespace,omitempty"`
}

// ResourceDistributionConditionType names a ResourceDistribution condition.
type ResourceDistributionConditionType string

const (
	// ResourceDistributionConflictOccurred: a target namespace already holds an object of the
	// same name that this ResourceDistribution does not own.
	ResourceDistributionConflictOccurred ResourceDistributionConditionType = "ConflictOccurred"
	// ResourceDistributionNamespaceNotExists: some included namespaces do not exist.
	ResourceDistributionNamespaceNotExists ResourceDistributionConditionType = "NamespaceNotExists"
	// ResourceDistributionGetResourceFailed: reading existing copies failed.
	ResourceDistributionGetResourceFailed ResourceDistributionConditionType = "GetResourceFailed"
	// ResourceDistributionCreateResourceFailed: creating copies failed.
	ResourceDistributionCreateResourceFailed ResourceDistributionConditionType = "CreateResourceFailed"
	// ResourceDistributionUpdateResourceFailed: updating copies failed.
	ResourceDistributionUpdateResourceFailed ResourceDistributionConditionType = "UpdateResourceFailed"
	// ResourceDistributionDeleteResourceFailed: deleting copies from namespaces no longer
	// targeted failed.
	ResourceDistributionDeleteResourceFailed ResourceDistributionConditionType = "DeleteResourceFailed"
)

// ResourceDistributionConditionStatus is the status of a condition.
type ResourceDistributionConditionStatus string

const (
	// ResourceDistributionConditionTrue: the condition holds.
	ResourceDistributionConditionTrue ResourceDistributionConditionStatus = "True"
	// ResourceDistributionConditionFalse: the condition does not hold.
	ResourceDistributionConditionFalse ResourceDistributionConditionStatus = "False"
	// ResourceDistributionConditionUnknown: it cannot be told whether the condition holds.
	ResourceDistributionConditionUnknown ResourceDistributionConditionStatus = "Unknown"
)

// ResourceDistribution copies one Secret or ConfigMap into a set of
// namespaces and keeps the copies in sync, including namespaces created later.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=distributor
// +kubebuilder:printcolumn:name="TOTAL",type="integer",JSONPath=".status.desired",description="Target namespaces."
// +kubebuilder:printcolumn:name="SUCCEED",type="integer",JSONPath=".status.succeeded",description="Target namespaces with an up-to-date copy."
// +kubebuilder:printcolumn:name="FAILED",type="integer",JSONPath=".status.failed",description="Target namespaces where the copy failed."
type ResourceDistribution struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec ResourceDistributionSpec `json:"spec,omitempty"`
	// Status is the observed state, written by the controller.
	// +optional
	Status ResourceDistributionStatus `json:"status,omitempty"`
}

// ResourceDistributionList is a list of ResourceDistributions.
//
// +kubebuilder:object:root=true
type ResourceDistributionList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ResourceDistributions.
	Items []ResourceDistribution `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ResourceDistribution{}, &ResourceDistributionList{})
}
