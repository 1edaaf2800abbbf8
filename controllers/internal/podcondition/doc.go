// Package podcondition reads and writes a pod's status conditions and readiness gates, for
// every controller that owns one: Get and Set work on a pod in memory, HasGate and AddGate on its
// readiness gates, Hold and Release on the shared KruisePodReady condition, and Patch writes a
// change to the pod's status.
//
// KruisePodReady is shared: lifecycle hooks with markPodNotReady and container recreation both
// take a pod out of Service endpoints through it. Each of them is a Holder; the condition's
// message is the JSON list of holders, and the condition is False while the list is not empty.
// A holder only ever adds or removes itself, so one never makes a pod ready that another holds.
//
// Patch carries the resourceVersion it read. The kubelet writes the same status, so a conflict
// is expected: Patch then reads the pod again and applies the change to what it read, with
// client-go's retry.RetryOnConflict.
//
// The package knows no workload kind and must not import any controller package
// (`controllers/...` other than `controllers/internal/...`).
package podcondition
