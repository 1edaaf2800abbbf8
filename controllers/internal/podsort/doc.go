// Package podsort orders pods for scale-down and for updates. Scale-down removes first the pods
// that cost least to lose: unassigned, then pending, then not ready, then a lower
// controller.kubernetes.io/pod-deletion-cost, then ready for a shorter time, then more restarts,
// then newer. Updates go first to the pods that are already unavailable, then by the workload's
// update priority. It must not import any controller package (`controllers/...` other than
// `controllers/internal/...`).
package podsort
