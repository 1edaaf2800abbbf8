package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Workload annotations that make the add-on create and maintain a PersistentPodState for a
// StatefulSet by itself, instead of the user writing one.
const (
	// AnnotationAutoGeneratePersistentPodState, set to "true" on a StatefulSet, asks for a
	// PersistentPodState named after it. It needs AnnotationRequiredPersistentTopology or
	// AnnotationPreferredPersistentTopology as well.
	AnnotationAutoGeneratePersistentPodState = "kruise.io/auto-generate-persistent-pod-state"

	// AnnotationRequiredPersistentTopology lists, comma separated, node label keys a
	// recreated pod must land on the same values of, e.g. topology.kubernetes.io/zone.
	AnnotationRequiredPersistentTopology = "kruise.io/required-persistent-topology"

	// AnnotationPreferredPersistentTopology lists, comma separated, node label keys a
	// recreated pod should land on the same values of (weight 100), e.g.
	// kubernetes.io/hostname.
	AnnotationPreferredPersistentTopology = "kruise.io/preferred-persistent-topology"

	// AnnotationPersistentPodAnnotations lists, comma separated, pod annotation keys to keep
	// across recreation, e.g. cni.projectcalico.org/podIP.
	AnnotationPersistentPodAnnotations = "kruise.io/persistent-pod-annotations"
)

// PersistentPodStateSpec is the desired state of a PersistentPodState. At least one of
// requiredPersistentTopology and preferredPersistentTopology must be set.
//
// +kubebuilder:validation:XValidation:rule="has(self.requiredPersistentTopology) || (has(self.preferredPersistentTopology) && size(self.preferredPersistentTopology) > 0)",message="spec.requiredPersistentTopology or spec.preferredPersistentTopology must be set"
type PersistentPodStateSpec struct {
	// TargetReference is the workload whose pods' state is kept: a StatefulSet (built-in or
	// Advanced) or a workload allowed by the add-on's configuration. It cannot be changed.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.targetRef is immutable"
	TargetReference TargetReference `json:"targetRef"`

	// PersistentPodAnnotations are pod annotations recorded while a pod runs and written back
	// into the pod of the same name when it is recreated.
	// +optional
	PersistentPodAnnotations []PersistentPodAnnotation `json:"persistentPodAnnotations,omitempty"`

	// RequiredPersistentTopology makes a recreated pod land on a node with the same values of
	// the given node labels as before (a required node affinity).
	// +optional
	RequiredPersistentTopology *NodeTopologyTerm `json:"requiredPersistentTopology,omitempty"`

	// PreferredPersistentTopology makes a recreated pod prefer nodes with the same values of
	// the given node labels as before (preferred node affinity with the given weights).
	// +optional
	PreferredPersistentTopology []PreferredTopologyTerm `json:"preferredPersistentTopology,omitempty"`

	// PersistentPodStateRetentionPolicy is when a pod's recorded state is dropped:
	// WhenScaled (when the workload scales the pod away; the default) or WhenDeleted (only
	// when the workload is deleted).
	// +optional
	PersistentPodStateRetentionPolicy PersistentPodStateRetentionPolicyType `json:"persistentPodStateRetentionPolicy,omitempty"`
}

// PreferredTopologyTerm is a weighted topology preference.
type PreferredTopologyTerm struct {
	// Weight of the preference, as in node affinity.
	// +required
	Weight int32 `json:"weight"`
	// Preference lists the node label keys.
	// +required
	Preference NodeTopologyTerm `json:"preference"`
}

// NodeTopologyTerm is a set of node label keys.
type NodeTopologyTerm struct {
	// NodeTopologyKeys are node label keys, e.g. kubernetes.io/hostname.
	// +required
	NodeTopologyKeys []string `json:"nodeTopologyKeys"`
}

// PersistentPodAnnotation names a pod annotation.
type PersistentPodAnnotation struct {
	// Key is the annotation key.
	// +required
	Key string `json:"key"`
}

// PersistentPodStateRetentionPolicyType is when recorded pod state is dropped.
// +kubebuilder:validation:Enum=WhenScaled;WhenDeleted
type PersistentPodStateRetentionPolicyType string

const (
	// PersistentPodStateRetentionPolicyWhenScaled drops a pod's state when the workload
	// scales the pod away, and everything when the workload is deleted.
	PersistentPodStateRetentionPolicyWhenScaled PersistentPodStateRetentionPolicyType = "WhenScaled"
	// PersistentPodStateRetentionPolicyWhenDeleted keeps the state of scaled-away pods, for
	// a later scale-out, until the workload is deleted.
	PersistentPodStateRetentionPolicyWhenDeleted PersistentPodStateRetentionPolicyType = "WhenDeleted"
)

// PersistentPodStateStatus is the observed state of a PersistentPodState.
type PersistentPodStateStatus struct {
	// ObservedGeneration is the metadata.generation the controller last acted on.
	// +required
	ObservedGeneration int64 `json:"observedGeneration"`

	// PodStates maps a pod name to what was recorded of it once it was ready.
	// +optional
	PodStates map[string]PodState `json:"podStates,omitempty"`
}

// PodState is what is recorded of one pod.
type PodState struct {
	// NodeName is the node the pod ran on.
	// +optional
	NodeName string `json:"nodeName,omitempty"`

	// NodeTopologyLabels are the topology labels of that node, key to value (e.g.
	// kubernetes.io/hostname: node-1).
	// +optional
	NodeTopologyLabels map[string]string `json:"nodeTopologyLabels,omitempty"`

	// Annotations are the recorded pod annotations.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PersistentPodState keeps the node topology and chosen annotations of the pods of a stateful
// workload, so that a pod recreated under the same name comes back to the same place (node,
// zone) and with the same annotations (e.g. a fixed IP).
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
type PersistentPodState struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec PersistentPodStateSpec `json:"spec,omitempty"`
	// Status is the observed state, written by the controller.
	// +optional
	Status PersistentPodStateStatus `json:"status,omitempty"`
}

// PersistentPodStateList is a list of PersistentPodStates.
//
// +kubebuilder:object:root=true
type PersistentPodStateList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the PersistentPodStates.
	Items []PersistentPodState `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PersistentPodState{}, &PersistentPodStateList{})
}
