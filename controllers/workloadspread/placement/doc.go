// Package placement is WorkloadSpread's part of the pod admission webhooks:
//   - Step, a /mutate-pod step: it finds the WorkloadSpread whose targetRef owns a new pod
//     (CloneSet, Deployment through its ReplicaSet, ReplicaSet, Job, Advanced StatefulSet, or
//     a custom workload of the kruise-configuration whitelist, directly or through the
//     sub-resource kinds it lists),
//     picks a subset, records the pod in that subset's creatingPods and patches the pod.
//     Percentage subsets are resolved against the target's replicas at admission, not against
//     those the recorded status was computed with (spread.Statuses); a target or ReplicaSet
//     the cache has not seen yet is read from the apiserver;
//   - Check, a /validate-pod check: on pod delete and eviction it records the pod in its
//     subset's deletingPods, so the subset's count stays right until the controller sees the
//     pod gone.
//
// Subset statuses are written with optimistic concurrency through
// controllers/internal/groupcommit: one writer per WorkloadSpread in this process at a time,
// carrying every admission that queued while the write before it was in flight, each decided
// on the statuses the earlier ones left; each write carries the resourceVersion it read and is
// retried on conflict with a fresh read, so concurrent creations never overfill a subset. The decisions
// themselves are spread's; this package only reads, locks and writes.
//
// Targets, their replicas and the custom-workload whitelist are read through
// controllers/internal/workloadref.
//
// It imports apis/, controllers/setup, controllers/internal/podadmission (for the Step and Check
// interfaces), controllers/internal/groupcommit, controllers/internal/workloadref,
// controllers/workloadspread/spread and features/;
// it must not import the manager or another kind's package (`controllers/...` other than
// `controllers/setup`, `controllers/internal/...` and `controllers/workloadspread/spread`).
package placement
