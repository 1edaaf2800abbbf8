// Package workloadspread reconciles WorkloadSpreads. For each one it reads the pods the pod
// webhook put into its subsets (by their apps.kruise.io/matched-workloadspread annotation),
// puts the target's pods that predate it into the subset their node fits (recording the match
// and, unless workloadspread.kruise.io/ignore-patch-existing-pods-metadata is "true", the
// subset patch's labels and annotations on them), and
//   - writes controller.kubernetes.io/pod-deletion-cost on them (CloneSet, Deployment and
//     ReplicaSet targets), so a scale-down of the target removes the pods of the last subsets
//     and those above a subset's maxReplicas first;
//   - computes status.subsetStatuses: replicas, missingReplicas, and the creatingPods and
//     deletingPods the webhooks recorded, each kept until the pod shows up or goes, or until it
//     expires (30s for a creation, 15s for a deletion);
//   - under scheduleStrategy Adaptive, marks a subset whose pods stayed unschedulable for
//     rescheduleCriticalSeconds Schedulable=False and deletes those pods, so their
//     replacements go to the next subset; the subset is tried again after five minutes.
//
// It watches WorkloadSpreads, pods (by their annotation) and the target kinds, so percentage
// subsets follow a change of the target's replicas. While the target of percentage subsets is
// not in the cache (not created yet, or gone) it writes only observedGeneration, no subset
// status: percentages of nothing are not written as 0, and the target's appearance brings the
// WorkloadSpread back. The kind of a custom workload target (one the kruise-configuration
// ConfigMap's WorkloadSpread_Watch_Custom_Workload_WhiteList names) is watched from the first
// pass that finds such a target (kit.LateWatches), so its replicas count as soon as they change,
// whenever the kind was whitelisted or its CRD installed.
//
// The decisions are pure (workloadspread_status.go, spread.DeletionCosts); the reconciler
// reads, applies and writes the status with optimistic concurrency, as the webhooks do.
// Sub-packages: spread (pure decisions), placement (the pod webhook parts).
//
// It imports apis/, controllers/setup, controllers/internal and its own sub-packages; it must not
// import the manager or any other kind's package (`controllers/...` other than
// `controllers/setup`, `controllers/internal/...` and `controllers/workloadspread/...`).
package workloadspread
