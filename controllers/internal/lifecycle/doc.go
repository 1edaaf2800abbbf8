// Package lifecycle reads and moves a pod's lifecycle state (the lifecycle.apps.kruise.io/state
// label) and tells whether a lifecycle hook holds a pod: a hook holds a pod while the pod carries
// one of the hook's labels or finalizers, which the user's operator removes when it is done.
//
// Next is the one pure transition function every workload shares, in its planner and in its pass
// that moves finished hooks along: a deletion (a scale-down, a chosen pod, or a recreate update)
// goes through preDelete (PreparingDelete); only an in-place update goes through inPlaceUpdate
// (PreparingUpdate); PreparingNormal, Updating and Updated move on by themselves.
//
// A hook with markPodNotReady makes Mover.Move take a hold (podcondition.Hold, user agent
// "Lifecycle") on the pod's KruisePodReady condition when the pod enters PreparingDelete or
// PreparingUpdate; every move to Normal lets go of it. Other holders of the condition, such as a
// container recreation, are left alone.
//
// It uses controllers/internal/podcondition and must not import any controller package
// (`controllers/...` other than `controllers/internal/...`).
package lifecycle
