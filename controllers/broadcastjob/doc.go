// Package broadcastjob owns the BroadcastJob controller: it runs one pod from the job's template
// on every node the template can be placed on, within spec.parallelism, and finishes, fails,
// pauses and deletes the job as its completion and failure policies say. The decisions are made
// by plan, a pure function of the job, the nodes, the job's pods and the time; Reconcile only
// reads and writes. Pods are created in the shared slow-start batches (controllers/internal/
// slowstart), at most slowstart.MaxPerReconcile per reconcile, that stop when the job changes or
// goes; a parallelism of 2147483647 is only compared with the nodes that exist.
//
// It imports the API types and the shared controller machinery (controllers/internal, setup);
// it must not import another kind's controller or the webhooks (`controllers/...` other than
// `controllers/internal/...` and `controllers/setup`).
package broadcastjob
