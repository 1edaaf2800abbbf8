// Package podowner is what the controllers of the workloads that own their pods, keep revisions
// and update pods in place (CloneSet, Advanced StatefulSet, Advanced DaemonSet) hold alike: their
// clients, clock and gates, their expectations, revision history, in-place updater and lifecycle
// mover (Base, which each kind's Reconciler embeds), and the run of kit.PodOwnerPass over those
// expectations with the image pre-download its gates turn on (Run). A kind keeps what is its own:
// its scope, plan, status and watches.
//
// It must not import any controller package (`controllers/...` other than `controllers/setup`
// and `controllers/internal/...`).
package podowner
