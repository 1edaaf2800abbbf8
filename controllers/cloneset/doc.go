// Package cloneset is the CloneSet controller. Each reconcile reads the CloneSet's pods, PVCs and
// revisions into a scope, moves running in-place updates and lifecycle hooks along, plans (a pure
// function of spec, pods and revisions: which pods to create, delete, update in place or
// recreate), applies the plan with the writer the replica workloads share
// (controllers/internal/podwrite), and writes the status once (counts and failure conditions from
// controllers/internal/rollout).
//
// Whether old pods update in place or are recreated is decided once per source revision while
// the plan input is built (inplaceupdate.PlanUpdate), and the plan's updates carry the decision;
// apply only carries it out. An InPlaceOnly change that cannot go in place is a plan outcome: the
// status sets FailedUpdate, apply records an event, and no pod is touched. Lifecycle hooks are
// routed by lifecycle.Next, which the plan and the refresh pass share: the inPlaceUpdate hook
// (PreparingUpdate) holds only pods that update in place; a recreate is a deletion, so it goes
// through the preDelete hook: the pod gets the apps.kruise.io/specified-delete label with the
// value "recreate" and waits in PreparingDelete while the hook holds it. When the CloneSet has
// volumeClaimTemplates and reuses PVCs (no scaleStrategy.disablePVCReuse), the held pod keeps its
// place: it is deleted without its PVCs once the hook lets go, and its replacement is created after
// it is gone, on the same instance ID and so the same PVCs. Otherwise it is replaced like any chosen
// pod: the held pod still counts as a replica, so its replacement is created once it is gone (or
// beside it when the CloneSet has the apps.kruise.io/cloneset-scaling-exclude-preparing-delete
// label), and its PVCs go with it.
//
// 1.8's CloneSet gates act in the plan input and the plan: CloneSetPartitionRollback gives
// updated pods a route back to the current revision and the plan rolls back those beyond
// replicas minus the partition; PreparingUpdateAsUpdate counts pods in PreparingUpdate as
// updated for scaling; RecreatePodWhenChangeVCTInCloneSetGate recreates, with new PVCs, pods whose
// revision carries another claim-template hash (cloneset_claims.go). CloneSetEventHandlerOptimization
// filters pod updates in the event handler (cloneset_events.go).
//
// Creation is bounded whatever the replicas (cloneset_create.go): pods are built and created in
// slow-start batches (1, 2, 4, ... up to CreateBatchLimit), at most MaxCreatesPerReconcile per
// reconcile, and between batches the CloneSet is read again from the cache so that a scale-down,
// a spec change or a deletion stops creation within one batch. Instance IDs come from bounded
// random tries that grow longer when the five-character space is crowded. This is the pattern
// for every workload that creates pods.
//
// It imports the shared machinery in controllers/internal and the API types; it must not import
// another controller package (`controllers/...` other than `controllers/internal/...` and
// `controllers/setup`).
package cloneset
