// Package workloadspread holds the WorkloadSpread validating admission handler
// ("/validate-apps-kruise-io-v1alpha1-workloadspread"): the rules the CRD schema cannot express
// (a targetRef of a supported kind that no other WorkloadSpread holds and that never changes,
// unique subset names, node selector terms, tolerations and patches that fit a pod, maxReplicas
// of one type summing to at most 100%, the Adaptive strategy's bounds). Validation is a pure
// function; the handler, built on the admission kit (controllers/webhook/admit), only lists the
// namespace's other WorkloadSpreads.
//
// It imports apis/, controllers/setup, controllers/workloadspread/spread and the admission kit;
// it must not import the manager, other webhook packages or any controller (`controllers/...`
// other than `controllers/setup`, `controllers/workloadspread/spread` and the shared machinery
// spread uses, `controllers/internal/...`, the kit `controllers/webhook/admit` and the deletion
// guard it holds, `controllers/webhook/deletionprotection`).
package workloadspread
