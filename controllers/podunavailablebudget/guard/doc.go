// Package guard is PodUnavailableBudget's part of the pod admission webhooks:
//   - Step, a /mutate-pod step: it stamps a new pod with kruise.io/related-pub, the name of
//     the budget that covers it (targetRef naming its workload, or selector matching it);
//   - Check, a /validate-pod check: pod deletion and eviction (gate
//     PodUnavailableBudgetDeleteGate) and pod updates that may make the pod unavailable (gate
//     PodUnavailableBudgetUpdateGate) take room from the pod's budget or are refused with 403.
//
// A pod without the related-pub annotation is let through at once, with no read: pod update
// traffic is high and only covered pods carry the annotation.
//
// It imports apis/, controllers/setup, controllers/internal/podadmission (for the Step and Check
// interfaces), controllers/internal/pubcheck and features/; it must not import the manager or
// another kind's package (`controllers/...` other than `controllers/setup` and
// `controllers/internal/...`).
package guard
