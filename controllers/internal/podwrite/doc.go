// Package podwrite is the apply step that the replica workloads (CloneSet, Advanced StatefulSet,
// Advanced DaemonSet) share: the API writes their plans ask of their pods (create in batches,
// delete, update in place or by recreation, lifecycle moves), each under the workload's
// expectations and with the events 1.8 emits, and the pods and claims they build from a revision's
// template. What a kind words differently (its event messages, its pod names) it passes in; what it
// decides (which pods, in which order) its plan decides. It must not import any controller package
// (`controllers/...` other than `controllers/internal/...`).
package podwrite
