// Package slowstart creates a workload's pods in bounded slow-start batches: 1, 2, 4, ... up to
// BatchLimit, at most MaxPerReconcile in one reconcile, asking before every batch after the
// first whether the workload still wants them. Every workload controller that creates pods
// uses it, so that no replicas count, however large, can hold the manager's memory or a worker.
//
// Reread is the stop check every workload passes to Run: it reads the workload again from the
// cache and stops creation once it changed, is being deleted or is gone.
//
// It knows nothing of a particular workload kind; it imports only the API machinery and
// controller-runtime's client, and must not import a controller package (`controllers/...`
// other than `controllers/internal/...`).
package slowstart
