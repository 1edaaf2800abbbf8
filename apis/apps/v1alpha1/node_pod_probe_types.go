package v1alpha1

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodePodProbeSpec is the desired state of a NodePodProbe: the probes the node agent runs on
// one node. The PodProbeMarker controller writes it.
type NodePodProbeSpec struct {
	// PodProbes lists, per pod on the node, the probes to run.
	// +optional
	PodProbes []PodProbe `json:"podProbes,omitempty"`
}

// PodProbe is the probes of one pod.
type PodProbe struct {
	// Name is the pod name.
	// +required
	Name string `json:"name"`

	// Namespace is the pod namespace.
	// +required
	Namespace string `json:"namespace"`

	// UID is the pod UID; it tells a recreated pod of the same name from the old one.
	// +required
	UID string `json:"uid"`

	// IP is the pod IP, the address TCP and HTTP probes connect to.
	// +required
	IP string `json:"IP"`

	// Probes are the container probes to run in the pod.
	// +optional
	Probes []ContainerProbe `json:"probes,omitempty"`
}

// ContainerProbe is one probe to run in a container.
type ContainerProbe struct {
	// Name identifies the probe within the pod: <PodProbeMarker name>#<probe name>.
	// +required
	Name string `json:"name"`

	// ContainerName is the container the probe runs in.
	// +required
	ContainerName string `json:"containerName"`

	// Probe is the check and its timing.
	// +required
	Probe ContainerProbeSpec `json:"probe"`
}

// NodePodProbeStatus is the observed state of a NodePodProbe, written by the node agent.
type NodePodProbeStatus struct {
	// PodProbeStatuses are the latest results, per pod.
	// +optional
	PodProbeStatuses []PodProbeStatus `json:"podProbeStatuses,omitempty"`
}

// PodProbeStatus is the results of the probes of one pod.
type PodProbeStatus struct {
	// Name is the pod name.
	// +required
	Name string `json:"name"`

	// Namespace is the pod namespace.
	// +required
	Namespace string `json:"namespace"`

	// UID is the pod UID.
	// +required
	UID string `json:"uid"`

	// ProbeStates are the results, per probe.
	// +optional
	ProbeStates []ContainerProbeState `json:"probeStates,omitempty"`
}

// ContainerProbeState is the latest result of one probe.
type ContainerProbeState struct {
	// Name is the probe name.
	// +required
	Name string `json:"name"`

	// State is Succeeded, Failed or Unknown.
	// +required
	// +kubebuilder:validation:Enum=Succeeded;Failed;Unknown
	State ProbeState `json:"state"`

	// LastProbeTime is when the probe last ran.
	// +optional
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty"`

	// LastTransitionTime is when State last changed.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`

	// Message is the probe's output when it succeeded, or its error when it failed.
	// +optional
	Message string `json:"message,omitempty"`
}

// ProbeState is the result of a probe.
type ProbeState string

const (
	// ProbeSucceeded: the probe passed.
	ProbeSucceeded ProbeState = "Succeeded"
	// ProbeFailed: the probe failed.
	ProbeFailed ProbeState = "Failed"
	// ProbeUnknown: the probe has not given a result yet.
	ProbeUnknown ProbeState = "Unknown"
)

// NodePodProbe holds the custom probes the node agent of one node runs, and their results.
// It is named after the node and managed by the add-on, not by users.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
type NodePodProbe struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec NodePodProbeSpec `json:"spec,omitempty"`
	// Status is the observed state, written by the node agent.
	// +optional
	Status NodePodProbeStatus `json:"status,omitempty"`
}

// NodePodProbeList is a list of NodePodProbes.
//
// +kubebuilder:object:root=true
type NodePodProbeList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the NodePodProbes.
	Items []NodePodProbe `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NodePodProbe{}, &NodePodProbeList{})
}

// ContainerProbeName is the name a PodProbeMarker's probe carries in a NodePodProbe:
// <marker>#<probe>. The webhook refuses '#' in probe names, so the marker name is everything
// before the first '#'.
func ContainerProbeName(marker, probe string) string { return marker + "#" + probe }

// SplitContainerProbeName returns the marker and probe names of a NodePodProbe probe name; ok
// is false when the name does not have the <marker>#<probe> form.
func SplitContainerProbeName(name string) (marker, probe string, ok bool) {
	marker, probe, ok = strings.Cut(name, "#")
	return marker, probe, ok && marker != "" && probe != ""
}

// VirtualKubeletNodeType is the value of the Node label "type" that marks a serverless node: no
// kruise-daemon runs there, so it gets no NodePodProbe and its pods no probes.
const VirtualKubeletNodeType = "virtual-kubelet"
