// Package uniteddeployment serves the UnitedDeployment admission webhooks at their 1.8 paths:
// defaulting (revisionHistoryLimit, the Manual update strategy, minReplicas 0 for elastic subsets,
// and, unless TemplateNoDefaults is on, the core pod and claim defaults in a statefulSetTemplate on
// create and on a template change, as 1.8 does) and validation (subset names unique DNS labels,
// valid node selector terms and tolerations, subset replicas that add up, partitions naming
// subsets, the template's kind-specific rules, immutable subset placement, and deletion
// protection).
//
// The embedded workload templates are checked only as 1.8 checks them inside a UnitedDeployment:
// the controller sets each subset workload's selector, replicas and partition, so the template's
// own values of those are not refused for what the workload kind alone would refuse.
//
// It imports the API types, the allocate package (for the replicas arithmetic), the admission kit
// (controllers/webhook/admit) and the deletion protection guard; it must not import a controller
// (`controllers/...` other than `controllers/setup`, `controllers/uniteddeployment/allocate` and
// `controllers/webhook/...`).
package uniteddeployment
