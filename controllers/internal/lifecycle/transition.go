package lifecycle

import (
	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
)

// Intent is what a controller means to do with a pod; the lifecycle hooks decide whether it may
// do it now.
type Intent int

const (
	// IntentNone means the pod is left as it is; only finished hooks move it on.
	IntentNone Intent = iota
	// IntentDelete means the pod is to be deleted: a scale-down, a chosen pod, or a recreate
	// update. Every deletion goes through the preDelete hook.
	IntentDelete
	// IntentUpdateInPlace means the pod is to be updated in place, through the inPlaceUpdate
	// hook.
	IntentUpdateInPlace
)

// Pod is what the transition needs to know of a pod.
type Pod struct {
	State appspub.LifecycleStateType
	// PreDeleteHeld and InPlaceHeld say whether the preDelete or inPlaceUpdate hook holds the
	// pod (IsHooked).
	PreDeleteHeld, InPlaceHeld bool
	// PreNormalDone and InPlaceDone say whether the pod carries every handler of the preNormal or
	// inPlaceUpdate hook (IsAllHooked; true when there is no such hook).
	PreNormalDone, InPlaceDone bool
	// AtUpdateRevision is true when the pod is at the update revision.
	AtUpdateRevision bool
}

// Step is what to do with a pod now.
type Step struct {
	// Move is the state to move the pod to, or "" to leave its state.
	Move appspub.LifecycleStateType
	// Proceed says that the deletion or in-place update the intent names may happen now.
	Proceed bool
}

// Next is the lifecycle transition of a pod for an intent. It is pure, and it is the one place
// that routes pods through the hooks:
//   - a deletion moves a pod the preDelete hook holds to PreparingDelete and waits there until the
//     hook lets go;
//   - an in-place update moves a pod the inPlaceUpdate hook holds to PreparingUpdate and waits
//     there until the hook lets go; the inPlaceUpdate hook never holds a pod that is recreated;
//   - without an intent, PreparingNormal goes to Normal once the preNormal hook is all there,
//     Updating goes to Updated once the pod is at the update revision, and Updated goes to Normal
//     once the inPlaceUpdate hook is all there again.
func Next(p Pod, intent Intent) Step {
	switch intent {
	case IntentDelete:
		return held(p.PreDeleteHeld, p.State, appspub.LifecycleStatePreparingDelete)
	case IntentUpdateInPlace:
		return held(p.InPlaceHeld, p.State, appspub.LifecycleStatePreparingUpdate)
	}
	switch p.State {
	case appspub.LifecycleStatePreparingNormal:
		if p.PreNormalDone {
			return Step{Move: appspub.LifecycleStateNormal}
		}
	case appspub.LifecycleStateUpdating:
		if p.AtUpdateRevision {
			return Step{Move: appspub.LifecycleStateUpdated}
		}
	case appspub.LifecycleStateUpdated:
		if p.InPlaceDone {
			return Step{Move: appspub.LifecycleStateNormal}
		}
	}
	return Step{}
}

// held is the step of an intent whose hook may hold the pod: it proceeds when the hook does not
// hold the pod, else moves the pod to the hook's waiting state and waits there.
func held(hold bool, state, waiting appspub.LifecycleStateType) Step {
	switch {
	case !hold:
		return Step{Proceed: true}
	case state == waiting:
		return Step{}
	}
	return Step{Move: waiting}
}

// Observe reads what Next needs from a pod and the workload's lifecycle (nil for none).
func Observe(lc *appspub.Lifecycle, pod *corev1.Pod, atUpdateRevision bool) Pod {
	if lc == nil {
		lc = &appspub.Lifecycle{}
	}
	return Pod{
		State:            State(pod),
		PreDeleteHeld:    IsHooked(lc.PreDelete, pod),
		InPlaceHeld:      IsHooked(lc.InPlaceUpdate, pod),
		PreNormalDone:    IsAllHooked(lc.PreNormal, pod),
		InPlaceDone:      IsAllHooked(lc.InPlaceUpdate, pod),
		AtUpdateRevision: atUpdateRevision,
	}
}
