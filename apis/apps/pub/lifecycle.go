package pub

const (
	// LifecycleStateKey is the pod label that carries the pod's LifecycleStateType.
	LifecycleStateKey = "lifecycle.apps.kruise.io/state"
	// LifecycleTimestampKey is the pod annotation recording when the state last changed.
	LifecycleTimestampKey = "lifecycle.apps.kruise.io/timestamp"
)

// LifecycleStateType is where a pod stands in its workload's lifecycle.
// +kubebuilder:validation:Enum=Normal;PreparingNormal;PreparingUpdate;Updating;Updated;PreparingDelete
type LifecycleStateType string

const (
	// LifecycleStatePreparingNormal: created, waiting for the preNormal hook to be released.
	LifecycleStatePreparingNormal LifecycleStateType = "PreparingNormal"
	// LifecycleStateNormal: serving.
	LifecycleStateNormal LifecycleStateType = "Normal"
	// LifecycleStatePreparingUpdate: waiting for the inPlaceUpdate hook before an in-place update.
	LifecycleStatePreparingUpdate LifecycleStateType = "PreparingUpdate"
	// LifecycleStateUpdating: the in-place update is in progress.
	LifecycleStateUpdating LifecycleStateType = "Updating"
	// LifecycleStateUpdated: the in-place update finished; waiting for the hook to be released.
	LifecycleStateUpdated LifecycleStateType = "Updated"
	// LifecycleStatePreparingDelete: waiting for the preDelete hook before deletion.
	LifecycleStatePreparingDelete LifecycleStateType = "PreparingDelete"
)

// Lifecycle lets users hold a pod at chosen points of its life until their own
// controller releases it.
type Lifecycle struct {
	// PreDelete holds a pod before it is deleted.
	// +optional
	PreDelete *LifecycleHook `json:"preDelete,omitempty"`
	// InPlaceUpdate holds a pod before it is updated in place.
	// +optional
	InPlaceUpdate *LifecycleHook `json:"inPlaceUpdate,omitempty"`
	// PreNormal holds a newly created pod before it becomes Normal.
	// +optional
	PreNormal *LifecycleHook `json:"preNormal,omitempty"`
}

// LifecycleHook says what marks a pod as held. The hook is released when a user removes the
// labels or finalizers (or, for preNormal, when they are present).
type LifecycleHook struct {
	// LabelsHandler are pod labels whose presence holds the pod.
	// +optional
	LabelsHandler map[string]string `json:"labelsHandler,omitempty"`
	// FinalizersHandler are pod finalizers whose presence holds the pod.
	// +optional
	FinalizersHandler []string `json:"finalizersHandler,omitempty"`
	// MarkPodNotReady sets the KruisePodReady condition False while the hook holds the pod,
	// so it leaves Service endpoints first. Default false.
	// +optional
	MarkPodNotReady bool `json:"markPodNotReady,omitempty"`
}
