// Package cloneset is the CloneSet controller. Each reconcile reads the CloneSet's pods, PVCs and
// revisions into a scope, moves running in-place updates and lifecycle hooks along, plans (a pure
// function of spec, pods and revisions: which pods to create, delete, update in place or
// recreate), applies the plan, and writes the status once.
//
// Creation is bounded whatever the replicas (cloneset_create.go): pods are built and created in
// slow-start batches (1, 2, 4, ... up to CreateBatchLimit), at most MaxCreatesPerReconcile per
// reconcile, and between batches the CloneSet is read again from the cache so that a scale-down,
// a spec change or a deletion stops creation within one batch. Instance IDs come from bounded
// random tries that grow longer when the five-character space is crowded. This is the pattern
// for every workload that creates pods.
//
// It imports the shared machinery in controllers/internal and the API types; it must not import
// another controller package.
package cloneset
