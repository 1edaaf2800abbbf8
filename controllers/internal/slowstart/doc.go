// Package slowstart creates a workload's pods in bounded slow-start batches: 1, 2, 4, ... up to
// BatchLimit, at most MaxPerReconcile in one reconcile, asking before every batch after the
// first whether the workload still wants them. Every workload controller that creates pods
// uses it, so that no replicas count, however large, can hold the manager's memory or a worker.
//
// It knows nothing of a particular workload kind; it imports only the API machinery and must
// not import a controller package (`controllers/...` other than `controllers/internal/...`).
package slowstart
