package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Labels and annotations on a ContainerRecreateRequest. They are part of the API.
const (
	// ContainerRecreateRequestPodNameKey is the label holding the name of the target pod.
	// Set by the system on create; immutable.
	ContainerRecreateRequestPodNameKey = "crr.apps.kruise.io/pod-name"

	// ContainerRecreateRequestPodUIDKey is the label holding the UID of the target pod.
	// Set by the system on create; immutable.
	ContainerRecreateRequestPodUIDKey = "crr.apps.kruise.io/pod-uid"

	// ContainerRecreateRequestNodeNameKey is the label holding the node the target pod runs on,
	// which lets each node agent watch only its own requests. Set by the system on create;
	// immutable.
	ContainerRecreateRequestNodeNameKey = "crr.apps.kruise.io/node-name"

	// ContainerRecreateRequestActiveKey is the label, with the value "true", carried by requests
	// that have not completed yet; it is removed on completion so that node agents stop
	// watching the request.
	ContainerRecreateRequestActiveKey = "crr.apps.kruise.io/active"

	// ContainerRecreateRequestSyncContainerStatusesKey is the annotation holding, in JSON (a list
	// of ContainerRecreateRequestSyncContainerStatus), the statuses of the pod's containers. It is
	// kept up to date only while the request is Recreating.
	ContainerRecreateRequestSyncContainerStatusesKey = "crr.apps.kruise.io/sync-container-statuses"

	// ContainerRecreateRequestUnreadyAcquiredKey is the annotation recording that the pod has been
	// made not-ready for this request; needed when strategy.unreadyGracePeriodSeconds is set.
	// Once set it is immutable.
	ContainerRecreateRequestUnreadyAcquiredKey = "crr.apps.kruise.io/unready-acquired"
)

// ContainerRecreateRequestSpec is the desired state of a ContainerRecreateRequest.
type ContainerRecreateRequestSpec struct {
	// PodName is the pod, in the request's namespace, whose containers are recreated. Immutable.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.podName is immutable"
	// +required
	PodName string `json:"podName"`

	// Containers are the containers of the pod to recreate, each named once.
	// +kubebuilder:validation:MinItems=1
	// +listType=map
	// +listMapKey=name
	// +patchMergeKey=name
	// +patchStrategy=merge
	// +required
	Containers []ContainerRecreateRequestContainer `json:"containers" patchStrategy:"merge" patchMergeKey:"name"`

	// Strategy tunes how the containers are recreated. Defaults to failurePolicy Fail.
	// +kubebuilder:default={}
	// +optional
	Strategy *ContainerRecreateRequestStrategy `json:"strategy,omitempty"`

	// ActiveDeadlineSeconds is how long, in seconds from creation, the request may run before it
	// is marked failed. At least 3. Unset means no deadline.
	// +kubebuilder:validation:Minimum=3
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// TTLSecondsAfterFinished is how long, in seconds, a completed request is kept before it is
	// deleted. Unset keeps it forever.
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// ContainerRecreateRequestContainer names one container to recreate. Apart from the name, its
// fields are copied from the pod by the system when the request is created.
type ContainerRecreateRequestContainer struct {
	// Name is the container's name in the pod's spec.containers.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// PreStop is the container's preStop hook, copied from the pod by the system. Read-only.
	// +optional
	PreStop *ProbeHandler `json:"preStop,omitempty"`

	// Ports are the container's ports, copied from the pod by the system when the preStop hook
	// is an HTTP call (which may name a port). Read-only.
	// +optional
	Ports []corev1.ContainerPort `json:"ports,omitempty"`

	// StatusContext is the container's runtime state when the request was accepted, recorded by
	// the system so that it can tell when the container has been recreated. Read-only.
	// +optional
	StatusContext *ContainerRecreateRequestContainerContext `json:"statusContext,omitempty"`
}

// ProbeHandler is an action run against a container, the shape of a lifecycle hook handler.
// Exactly one of its fields is set.
type ProbeHandler struct {
	// Exec runs a command in the container.
	// +optional
	Exec *corev1.ExecAction `json:"exec,omitempty"`

	// HTTPGet sends an HTTP GET request to the container.
	// +optional
	HTTPGet *corev1.HTTPGetAction `json:"httpGet,omitempty"`

	// TCPSocket opens a TCP connection to the container.
	// +optional
	TCPSocket *corev1.TCPSocketAction `json:"tcpSocket,omitempty"`
}

// ContainerRecreateRequestContainerContext is the runtime state of a container before it is recreated.
type ContainerRecreateRequestContainerContext struct {
	// ContainerID is the runtime ID of the container, as "<runtime>://<id>".
	// +required
	ContainerID string `json:"containerID"`

	// RestartCount is the container's restart count as the pod status reported it.
	// +required
	RestartCount int32 `json:"restartCount"`
}

// ContainerRecreateRequestStrategy tunes how the containers are recreated.
type ContainerRecreateRequestStrategy struct {
	// FailurePolicy is Fail (stop at the first container that fails to recreate and fail the
	// request) or Ignore (carry on with the next container). Defaults to Fail.
	// +kubebuilder:default=Fail
	// +optional
	FailurePolicy ContainerRecreateRequestFailurePolicyType `json:"failurePolicy,omitempty"`

	// OrderedRecreate, when true, recreates the containers one at a time, in the order listed,
	// each only after the previous one is running again. Defaults to false.
	// +optional
	OrderedRecreate bool `json:"orderedRecreate,omitempty"`

	// ForceRecreate, when true, kills the container even if it is still starting from an
	// earlier recreation. Defaults to false.
	// +optional
	ForceRecreate bool `json:"forceRecreate,omitempty"`

	// TerminationGracePeriodSeconds is how long, in seconds, the container is given to stop
	// gracefully; 0 kills it at once. Unset uses the pod's terminationGracePeriodSeconds.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`

	// UnreadyGracePeriodSeconds is how long, in seconds, the pod is held not-ready before the
	// preStop hook runs and the container is stopped, so that traffic drains first.
	// Unset does not mark the pod not-ready.
	// +kubebuilder:validation:Minimum=0
	// +optional
	UnreadyGracePeriodSeconds *int64 `json:"unreadyGracePeriodSeconds,omitempty"`

	// MinStartedSeconds is how long, in seconds, a recreated container must stay started (and
	// ready, if it has a readiness probe) before its recreation counts as succeeded.
	// Defaults to 0.
	// +optional
	MinStartedSeconds int32 `json:"minStartedSeconds,omitempty"`
}

// ContainerRecreateRequestFailurePolicyType names a failure policy of a ContainerRecreateRequest.
// +kubebuilder:validation:Enum=Fail;Ignore
type ContainerRecreateRequestFailurePolicyType string

const (
	// ContainerRecreateRequestFailurePolicyFail fails the request at the first container that
	// cannot be recreated.
	ContainerRecreateRequestFailurePolicyFail ContainerRecreateRequestFailurePolicyType = "Fail"
	// ContainerRecreateRequestFailurePolicyIgnore goes on with the other containers.
	ContainerRecreateRequestFailurePolicyIgnore ContainerRecreateRequestFailurePolicyType = "Ignore"
)

// ContainerRecreateRequestStatus is the observed state of a ContainerRecreateRequest.
type ContainerRecreateRequestStatus struct {
	// Phase is Pending, Recreating, Succeeded, Failed or Completed.
	// +optional
	Phase ContainerRecreateRequestPhase `json:"phase"`

	// CompletionTime is when the request completed (RFC 3339, UTC).
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Message explains the phase to a human.
	// +optional
	Message string `json:"message,omitempty"`

	// ContainerRecreateStates hold the recreation state of each container.
	// +optional
	ContainerRecreateStates []ContainerRecreateRequestContainerRecreateState `json:"containerRecreateStates,omitempty"`
}

// ContainerRecreateRequestPhase is the phase of a request or of one container's recreation.
type ContainerRecreateRequestPhase string

const (
	// ContainerRecreateRequestPending: not started yet.
	ContainerRecreateRequestPending ContainerRecreateRequestPhase = "Pending"
	// ContainerRecreateRequestRecreating: containers are being recreated.
	ContainerRecreateRequestRecreating ContainerRecreateRequestPhase = "Recreating"
	// ContainerRecreateRequestSucceeded: the container has been recreated.
	ContainerRecreateRequestSucceeded ContainerRecreateRequestPhase = "Succeeded"
	// ContainerRecreateRequestFailed: the container could not be recreated.
	ContainerRecreateRequestFailed ContainerRecreateRequestPhase = "Failed"
	// ContainerRecreateRequestCompleted: the request is over, whatever its outcome.
	ContainerRecreateRequestCompleted ContainerRecreateRequestPhase = "Completed"
)

// ContainerRecreateRequestContainerRecreateState is the recreation state of one container.
type ContainerRecreateRequestContainerRecreateState struct {
	// Name is the container's name.
	// +required
	Name string `json:"name"`

	// Phase is the container's recreation phase.
	// +required
	Phase ContainerRecreateRequestPhase `json:"phase"`

	// Message explains the phase to a human.
	// +optional
	Message string `json:"message,omitempty"`

	// IsKilled is true once the node agent has stopped the old container.
	// +optional
	IsKilled bool `json:"isKilled,omitempty"`
}

// ContainerRecreateRequestSyncContainerStatus is one entry of the JSON list kept in the
// crr.apps.kruise.io/sync-container-statuses annotation.
type ContainerRecreateRequestSyncContainerStatus struct {
	// Name is the container's name.
	Name string `json:"name"`

	// Ready is whether the container passes its readiness probe.
	Ready bool `json:"ready"`

	// RestartCount is the container's restart count.
	RestartCount int32 `json:"restartCount"`

	// ContainerID is the runtime ID of the container, as "<runtime>://<id>".
	// +optional
	ContainerID string `json:"containerID,omitempty"`
}

// ContainerRecreateRequest asks the node agent to recreate (stop and start again) some
// containers of a running pod, in place, without recreating the pod.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=crr,scope=Namespaced
// +kubebuilder:printcolumn:name="PHASE",type="string",JSONPath=".status.phase",description="Phase of the request."
// +kubebuilder:printcolumn:name="POD",type="string",JSONPath=".spec.podName",description="Pod whose containers are recreated."
// +kubebuilder:printcolumn:name="NODE",type="string",JSONPath=".metadata.labels.crr\\.apps\\.kruise\\.io/node-name",description="Node the pod runs on."
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp",description="Time since the object was created."
type ContainerRecreateRequest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec ContainerRecreateRequestSpec `json:"spec,omitempty"`

	// Status is the observed state, written by the system.
	// +optional
	Status ContainerRecreateRequestStatus `json:"status,omitempty"`
}

// ContainerRecreateRequestList is a list of ContainerRecreateRequests.
//
// +kubebuilder:object:root=true
type ContainerRecreateRequestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ContainerRecreateRequests.
	Items []ContainerRecreateRequest `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ContainerRecreateRequest{}, &ContainerRecreateRequestList{})
}
