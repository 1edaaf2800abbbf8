// Package nodepin holds what the per-node workloads (Advanced DaemonSet, BroadcastJob) share
// about tying a pod to one node: pinning it there by a required node affinity that the
// scheduler honours, reading back the node a pod is for, and the node-event filter that passes
// only changes which can move such pods. It imports only Kubernetes and controller-runtime
// packages and must not import a controller (`controllers/...`).
package nodepin
