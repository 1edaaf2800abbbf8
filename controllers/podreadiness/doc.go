// Package podreadiness owns the pod readiness controller: it gives every pod that carries the
// KruisePodReady readiness gate its first KruisePodReady condition, True, so the pod can become
// Ready. After that the condition belongs to the workloads (lifecycle hooks with
// markPodNotReady, container recreation) which turn it False and back; this controller never
// overrides a condition that exists.
//
// It also gives a new pod of an in-place updating workload (CloneSet, Advanced StatefulSet,
// Advanced DaemonSet) its first InPlaceUpdateReady condition, True, in the same write: a new
// pod then costs the manager one status write instead of two, and the workload's own reconcile
// does not spend its time writing conditions one pod after another. Once an in-place update
// starts on the pod, the workload owns that condition.
//
// A write's own event can lag behind the pod's other events (the binding, the kubelet's status):
// a pass on a cached copy that predates the controller's last write to the pod writes nothing,
// until the cache shows that write or ownedpods.ExpectationTimeout passes.
//
// It imports apis/, controllers/setup and controllers/internal/ (podcondition, expectations,
// ownedpods, kit); it must not import the manager, webhooks or other controllers
// (`controllers/...` other than `controllers/setup` and `controllers/internal/...`).
package podreadiness
