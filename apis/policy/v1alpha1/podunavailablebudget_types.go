package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// PubOperation is a pod operation a PodUnavailableBudget can guard.
type PubOperation string

const (
	// PubUpdateOperation is an update of the pod spec that disrupts the pod (e.g. an in-place
	// image update).
	PubUpdateOperation PubOperation = "UPDATE"
	// PubDeleteOperation is a deletion of the pod.
	PubDeleteOperation PubOperation = "DELETE"
	// PubEvictOperation is an eviction of the pod through the eviction API.
	PubEvictOperation PubOperation = "EVICT"
	// PubResizeOperation names an in-place resize of the pod's resources through pods/resize.
	// OpenKruise 1.8 has no such operation and neither does the add-on: the budget webhook
	// refuses it in kruise.io/pub-protect-operations and no resize is guarded.
	PubResizeOperation PubOperation = "RESIZE"
)

// Annotations of the PodUnavailableBudget contract.
const (
	// PubProtectOperationAnnotation is a PodUnavailableBudget annotation listing, comma
	// separated, the PubOperations it guards, e.g. "DELETE,EVICT". Without it DELETE, EVICT
	// and UPDATE are guarded.
	PubProtectOperationAnnotation = "kruise.io/pub-protect-operations"

	// PubProtectTotalReplicasAnnotation is a PodUnavailableBudget annotation whose integer
	// value is the desired number of pods, for pods whose workload has no replicas field the
	// budget can read (no scale subresource, or no workload at all).
	PubProtectTotalReplicasAnnotation = "pub.kruise.io/protect-total-replicas"

	// PodPubNoProtectionAnnotation, set to "true" on a pod, exempts it from every budget,
	// e.g. to force its deletion.
	PodPubNoProtectionAnnotation = "pub.kruise.io/no-protect"

	// PodRelatedPubAnnotation is the pod annotation in which the webhook caches the name of
	// the PodUnavailableBudget that covers the pod.
	PodRelatedPubAnnotation = "kruise.io/related-pub"
)

// PodUnavailableBudgetSpec is the desired state of a PodUnavailableBudget. Exactly one of
// selector and targetRef, and exactly one of maxUnavailable and minAvailable, must be set;
// selector and targetRef cannot be changed.
//
// +kubebuilder:validation:XValidation:rule="has(self.selector) != has(self.targetRef)",message="exactly one of spec.selector and spec.targetRef must be set"
// +kubebuilder:validation:XValidation:rule="has(self.maxUnavailable) != has(self.minAvailable)",message="exactly one of spec.maxUnavailable and spec.minAvailable must be set"
// +kubebuilder:validation:XValidation:rule="(has(self.selector) ? (has(oldSelf.selector) && self.selector == oldSelf.selector) : !has(oldSelf.selector)) && (has(self.targetRef) ? (has(oldSelf.targetRef) && self.targetRef == oldSelf.targetRef) : !has(oldSelf.targetRef))",message="spec.selector and spec.targetRef are immutable"
type PodUnavailableBudgetSpec struct {
	// Selector picks the pods, in the budget's namespace, that the budget covers. It must not
	// be empty.
	// +optional
	// +kubebuilder:validation:XValidation:rule="(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)",message="spec.selector must have at least one matchLabels entry or matchExpressions term"
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// TargetReference names the workload whose pods the budget covers.
	// +optional
	TargetReference *TargetReference `json:"targetRef,omitempty"`

	// MaxUnavailable is the most covered pods that may be unavailable after a guarded
	// operation: a number, or a percentage (at most 100%) of the desired pods.
	// +optional
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : (self.matches('^[0-9]+%$') && int(self.substring(0, size(self) - 1)) <= 100)",message="spec.maxUnavailable must be a non-negative number or a percentage from 0% to 100%"
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// MinAvailable is the fewest covered pods that must stay available after a guarded
	// operation: a number, or a percentage (at most 100%) of the desired pods.
	// +optional
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : (self.matches('^[0-9]+%$') && int(self.substring(0, size(self) - 1)) <= 100)",message="spec.minAvailable must be a non-negative number or a percentage from 0% to 100%"
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`
}

// TargetReference names a workload in the same namespace.
type TargetReference struct {
	// APIVersion is the group/version of the workload, e.g. apps.kruise.io/v1alpha1.
	// +required
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion,omitempty"`
	// Kind is the kind of the workload, e.g. CloneSet.
	// +required
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind,omitempty"`
	// Name is the name of the workload.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name,omitempty"`
}

// PodUnavailableBudgetStatus is the observed state of a PodUnavailableBudget.
type PodUnavailableBudgetStatus struct {
	// ObservedGeneration is the metadata.generation the status was computed for; the other
	// fields are only meaningful when it equals metadata.generation.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration"`

	// DisruptedPods maps the names of pods whose deletion or eviction was allowed, but not
	// yet seen by the controller, to the time it was allowed.
	// +optional
	DisruptedPods map[string]metav1.Time `json:"disruptedPods,omitempty"`

	// UnavailablePods maps the names of pods being updated in place to the time the update
	// was allowed; a pod leaves the map once it is ready at its new spec again.
	// +optional
	UnavailablePods map[string]metav1.Time `json:"unavailablePods,omitempty"`

	// UnavailableAllowed is how many more covered pods may become unavailable now.
	// +required
	UnavailableAllowed int32 `json:"unavailableAllowed"`

	// CurrentAvailable is the number of covered pods available now.
	// +required
	CurrentAvailable int32 `json:"currentAvailable"`

	// DesiredAvailable is the fewest covered pods that must stay available.
	// +required
	DesiredAvailable int32 `json:"desiredAvailable"`

	// TotalReplicas is the desired number of covered pods.
	// +required
	TotalReplicas int32 `json:"totalReplicas"`
}

// PodUnavailableBudget limits how many pods of an application may be unavailable at once, like
// a PodDisruptionBudget, but guards deletions and in-place updates as well as evictions.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=pub,scope=Namespaced
// +kubebuilder:printcolumn:name="Allowed",type="integer",JSONPath=".status.unavailableAllowed",description="Covered pods that may become unavailable now."
// +kubebuilder:printcolumn:name="Current",type="integer",JSONPath=".status.currentAvailable",description="Covered pods available now."
// +kubebuilder:printcolumn:name="Desired",type="integer",JSONPath=".status.desiredAvailable",description="Fewest covered pods that must stay available."
// +kubebuilder:printcolumn:name="Total",type="integer",JSONPath=".status.totalReplicas",description="Desired number of covered pods."
type PodUnavailableBudget struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec PodUnavailableBudgetSpec `json:"spec,omitempty"`
	// Status is the observed state, written by the controller and the webhook.
	// +optional
	Status PodUnavailableBudgetStatus `json:"status,omitempty"`
}

// PodUnavailableBudgetList is a list of PodUnavailableBudgets.
//
// +kubebuilder:object:root=true
type PodUnavailableBudgetList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the PodUnavailableBudgets.
	Items []PodUnavailableBudget `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PodUnavailableBudget{}, &PodUnavailableBudgetList{})
}
