// Package pubcheck is the PodUnavailableBudget check that every writer which may make a pod
// unavailable shares: the /validate-pod webhook for deletions, evictions and in-place updates,
// and the CloneSet controller before it updates a pod in place.
//
// The decisions are pure functions of a pod and a budget (Exempt, Protects, Available with
// Consistent, Take).
// Checker adds the reads and the status write: it finds the budget a pod's related-pub
// annotation names, takes one unit of room from status.unavailableAllowed and records the pod
// in disruptedPods (deletion, eviction) or unavailablePods (update), writing the status with
// optimistic concurrency. The checks of one budget that arrive together are decided one after
// another, each on the status the earlier ones left, so no more are admitted than
// unavailableAllowed, and are written as a group in one status write
// (controllers/internal/groupcommit). A dry run is decided the same way without taking room.
//
// Workloads resolves a budget's pods and desired count from its selector or targetRef, reading
// the workloads through controllers/internal/workloadref; the controller and the /mutate-pod
// step use it. A targetRef of a kind that is not built in is read through its scale
// sub-resource, as in 1.8: the pods the workload owns (or, when it owns none, those its scale's
// status.selector matches) against the scale's replicas.
//
// It imports apis/, controllers/internal/groupcommit and controllers/internal/inplaceupdate; it must not import a kind's package,
// the webhook server or the manager (`controllers/...` other than `controllers/internal/...`).
package pubcheck
