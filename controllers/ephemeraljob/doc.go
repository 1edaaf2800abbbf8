// Package ephemeraljob owns the EphemeralJob controller: it adds the job's ephemeral containers
// to the pods its selector finds, oldest first, at most spec.replicas pods and spec.parallelism
// at a time, through the pods' ephemeralcontainers subresource (in the shared slow-start batches
// of controllers/internal/slowstart, at most slowstart.MaxPerReconcile pods per reconcile, that
// stop when the job changes or goes), and reports from the
// containers' statuses how many pods are waiting, running, succeeded or failed. A finished job
// is deleted after ttlSecondsAfterFinished (1800 when unset). The decisions are made by
// planPass, a pure function; Reconcile only reads and writes.
//
// It imports the API types and the shared controller machinery; it must not import another
// kind's controller or the webhooks (`controllers/...` other than `controllers/internal/...` and
// `controllers/setup`).
package ephemeraljob
