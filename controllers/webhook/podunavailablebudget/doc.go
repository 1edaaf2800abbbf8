// Package podunavailablebudget holds the PodUnavailableBudget validating admission handler
// ("/validate-policy-kruise-io-podunavailablebudget"): exactly one of selector and targetRef,
// exactly one of maxUnavailable and minAvailable (a non-negative number or a percentage up to
// 100%), selector and targetRef unchanged on update, valid protect-operations and
// protect-total-replicas annotations, and no other budget of the namespace covering the same
// target or a selector of the same keys that can match the same pods, as in 1.8. With both budget
// gates off every budget is refused, as nothing would enforce it. Validation is a pure function;
// the handler lists the namespace's other budgets, and the admission kit
// (controllers/webhook/admit) decodes and answers.
//
// It imports apis/, controllers/setup, features/, the admission kit and its field rules; it must
// not import the manager, other webhook packages or any controller (`controllers/...` other than
// `controllers/setup`, the kit `controllers/webhook/admit` and the deletion guard it holds,
// `controllers/webhook/deletionprotection`, and `controllers/webhook/fieldrule`).
package podunavailablebudget
