// Package daemonset holds the Advanced DaemonSet admission handlers: defaulting (burstReplicas,
// the update strategy and its rolling update, revisionHistoryLimit, as 1.8 sets them; the
// deprecated Surging rolling update becomes Standard with a surge of one pod) and validation (the
// rules CEL cannot express or that need the whole object: the selector matches the template, the
// rolling update's bounds, the lifecycle hooks a DaemonSet supports, which fields may change).
// Validation is a pure function over the objects; the admission kit (controllers/webhook/admit)
// decodes and answers.
//
// It imports apis/, controllers/setup and the admission kit; it must not import the manager, other
// webhook packages or any controller (`controllers/...` other than `controllers/setup`, the kit
// `controllers/webhook/admit`, the shared pod-template checks
// `controllers/webhook/podtemplate` and the deletion guard it holds,
// `controllers/webhook/deletionprotection`).
package daemonset
