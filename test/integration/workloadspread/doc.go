// Package workloadspread proves WorkloadSpread against the real kube-apiserver, the real
// kube-scheduler and kube-controller-manager (Deployments and ReplicaSets) and simulated nodes
// in three zones, with kruise-manager in process: the /mutate-pod step spreading a CloneSet's
// and a Deployment's pods over zone subsets, concurrent creations never overfilling a subset,
// the pod-deletion-cost the controller writes steering a CloneSet scale-down, the /validate-pod
// check recording deletions and evictions, and the WorkloadSpread validating webhook.
package workloadspread
