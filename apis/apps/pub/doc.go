// Package pub holds the sub-types and pod-level contract that several workloads share:
// lifecycle hooks, update priority, the in-place update state recorded on pods, the
// readiness gates the controllers own, and container launch priority.
//
// It is imported by every API version package and must not import any package of this
// repository outside apis/ (`...` other than `apis/...`).
//
// +kubebuilder:object:generate=true
package pub
