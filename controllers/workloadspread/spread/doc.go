// Package spread holds the pure decisions of WorkloadSpread, shared by the /mutate-pod step,
// the /validate-pod check and the controller:
//   - which subset a new pod goes to, from the subset statuses (subset order, Schedulable
//     condition, missingReplicas that already counts pods being created), and by ordinal for
//     Advanced StatefulSet pods;
//   - how a pod in flight is recorded in, or released from, a subset's creatingPods and
//     deletingPods;
//   - the pod patch of a subset (requiredNodeSelectorTerm, preferredNodeSelectorTerms,
//     tolerations, patch) and the apps.kruise.io/matched-workloadspread annotation;
//   - the controller.kubernetes.io/pod-deletion-cost value of each pod.
//
// Every function here is pure: no client, no clock (callers pass the time). It imports apis/
// and controllers/internal/podsort only; it must not import a webhook, the manager or any
// controller (`controllers/...` other than `controllers/internal/...`).
package spread
