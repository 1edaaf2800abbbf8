// Package podreadiness owns the pod readiness controller: it gives every pod that carries the
// KruisePodReady readiness gate its first KruisePodReady condition, True, so the pod can become
// Ready. After that the condition belongs to the workloads (lifecycle hooks with
// markPodNotReady, container recreation) which turn it False and back; this controller never
// overrides a condition that exists.
//
// It imports apis/, controllers/setup and controllers/internal/podcondition; it must not import
// the manager, webhooks or other controllers.
package podreadiness
