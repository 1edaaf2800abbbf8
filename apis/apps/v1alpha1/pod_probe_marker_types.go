package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pod annotations of the PodProbeMarker contract.
const (
	// PodProbeMarkerAnnotationKey is the pod annotation holding, as a JSON list of
	// PodContainerProbe, the probes that apply to the pod. It is meant for serverless pods,
	// whose node has no node agent, so that the platform can run the probes itself.
	PodProbeMarkerAnnotationKey = "kruise.io/podprobe"

	// PodProbeMarkerListAnnotationKey is the pod annotation listing, comma separated, the
	// PodProbeMarkers whose probes were written into PodProbeMarkerAnnotationKey.
	PodProbeMarkerListAnnotationKey = "kruise.io/podprobemarker-list"
)

// PodProbeMarkerSpec is the desired state of a PodProbeMarker.
type PodProbeMarkerSpec struct {
	// Selector picks the pods, in the PodProbeMarker's namespace, to probe. It must not be
	// empty and cannot be changed.
	// +required
	// +kubebuilder:validation:XValidation:rule="(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)",message="spec.selector must have at least one matchLabels entry or matchExpressions term"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.selector is immutable"
	Selector *metav1.LabelSelector `json:"selector"`

	// Probes are run by the node agent in the selected pods. The result of each becomes a
	// pod condition (podConditionType) and/or pod labels and annotations (markerPolicy).
	// +required
	// +kubebuilder:validation:MinItems=1
	// +patchMergeKey=name
	// +patchStrategy=merge
	Probes []PodContainerProbe `json:"probes" patchStrategy:"merge" patchMergeKey:"name"`
}

// PodContainerProbe is one probe and what to do with its result.
//
// +kubebuilder:validation:XValidation:rule="(has(self.podConditionType) && size(self.podConditionType) > 0) || (has(self.markerPolicy) && size(self.markerPolicy) > 0)",message="spec.probes[]: podConditionType and markerPolicy cannot both be empty"
type PodContainerProbe struct {
	// Name identifies the probe; it must be unique among all probes that apply to a pod, and
	// may not contain '#' nor be the type of a pod condition owned by Kubernetes or the
	// add-on (PodScheduled, Initialized, Ready, ContainersReady, KruisePodReady,
	// InPlaceUpdateReady).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:Pattern=`^[^#]+$`
	Name string `json:"name"`

	// ContainerName is the container the probe runs in.
	// +required
	// +kubebuilder:validation:MinLength=1
	ContainerName string `json:"containerName"`

	// Probe is the check to run (exec, and for serverless pods also httpGet or tcpSocket)
	// with its timing (periodSeconds, timeoutSeconds, thresholds).
	// +required
	Probe ContainerProbeSpec `json:"probe"`

	// MarkerPolicy lists labels and annotations to patch into the pod when the probe
	// succeeds or fails. It cannot be empty when podConditionType is.
	// +optional
	// +patchMergeKey=state
	// +patchStrategy=merge
	MarkerPolicy []ProbeMarkerPolicy `json:"markerPolicy,omitempty" patchStrategy:"merge" patchMergeKey:"state"`

	// PodConditionType, when set, is the type of a pod condition that reports the result:
	// status True when the probe succeeds, False when it fails (e.g. game.kruise.io/healthy).
	// It cannot be empty when markerPolicy is.
	// +optional
	PodConditionType string `json:"podConditionType,omitempty"`
}

// ContainerProbeSpec is a container probe, with the fields of a pod probe inline.
type ContainerProbeSpec struct {
	// Probe is the check and its timing.
	corev1.Probe `json:",inline"`
}

// ProbeMarkerPolicy is what to patch into a pod for one probe result.
type ProbeMarkerPolicy struct {
	// State is the probe result this policy applies to: Succeeded or Failed. When no policy
	// exists for Failed, a failure removes what the Succeeded policy wrote.
	// +required
	// +kubebuilder:validation:Enum=Succeeded;Failed
	State ProbeState `json:"state"`

	// Labels are patched into the pod's labels.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations are patched into the pod's annotations, e.g.
	// controller.kubernetes.io/pod-deletion-cost.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PodProbeMarkerStatus is the observed state of a PodProbeMarker.
type PodProbeMarkerStatus struct {
	// ObservedGeneration is the metadata.generation the controller last acted on.
	// +required
	ObservedGeneration int64 `json:"observedGeneration"`

	// MatchedPods is the number of pods the selector matches.
	// +optional
	MatchedPods int64 `json:"matchedPods,omitempty"`
}

// PodProbeMarker runs custom probes in the containers of the pods it selects, through the
// node agent, and records the results on the pods as conditions, labels or annotations.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
type PodProbeMarker struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec PodProbeMarkerSpec `json:"spec,omitempty"`
	// Status is the observed state, written by the controller.
	// +optional
	Status PodProbeMarkerStatus `json:"status,omitempty"`
}

// PodProbeMarkerList is a list of PodProbeMarkers.
//
// +kubebuilder:object:root=true
type PodProbeMarkerList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the PodProbeMarkers.
	Items []PodProbeMarker `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PodProbeMarker{}, &PodProbeMarkerList{})
}
