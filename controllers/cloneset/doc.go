// Package cloneset is the CloneSet controller. Each reconcile reads the CloneSet's pods, PVCs and
// revisions into a scope, moves running in-place updates and lifecycle hooks along, plans (a pure
// function of spec, pods and revisions: which pods to create, delete, update in place or
// recreate), applies the plan, and writes the status once.
//
// It imports the shared machinery in controllers/internal and the API types; it must not import
// another controller package.
package cloneset
