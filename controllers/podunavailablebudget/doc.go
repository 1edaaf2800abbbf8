// Package podunavailablebudget runs the PodUnavailableBudget controller. For each budget it
// finds the pods it covers (selector or targetRef, see pubcheck.Workloads), stamps them with
// the kruise.io/related-pub annotation, and writes the status: totalReplicas, desiredAvailable
// (from maxUnavailable or minAvailable), currentAvailable (pods pubcheck.Available counts:
// ready and consistent with their spec), unavailableAllowed and the
// disruptedPods and unavailablePods records, dropping records older than their expiry
// (DeletionTimeout, UpdateTimeout) and requeueing itself for the next expiry.
//
// The status is a pure function of the budget, its pods and the time (computeStatus, with
// table tests); Reconcile only reads, stamps and writes. The checks that take room from the
// budget live in controllers/internal/pubcheck; the pod webhook parts live in guard.
//
// It imports apis/, controllers/setup and controllers/internal; it must not import another
// kind's package or the webhook server (`controllers/...` other than `controllers/setup` and
// `controllers/internal/...`).
package podunavailablebudget
