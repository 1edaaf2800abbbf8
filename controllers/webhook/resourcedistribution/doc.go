// Package resourcedistribution holds the ResourceDistribution validating admission handler
// ("/validate-apps-kruise-io-v1alpha1-resourcedistribution"): spec.resource must be a v1
// Secret or ConfigMap with a name that the apiserver would accept (checked by a dry-run
// creation in the manager's namespace), its apiVersion, kind and name never change, and the
// targets are well formed (namespace names, no namespace both included and excluded, a valid
// label selector). Validation is a pure function; the handler, built on the admission kit
// (controllers/webhook/admit), only dry-runs and applies the policies below. It is served whatever the gates; with ResourceDistributionGate off it refuses every
// ResourceDistribution, as 1.8 does.
//
// Two cluster policies, off by default as in 1.8, apply to a new spec and to a changed one
// (policy.go): --resourcedistribution-excluded-namespaces refuses a spec naming an excluded
// namespace in includedNamespaces, and --resourcedistribution-check-author-rights asks the
// apiserver (SubjectAccessReview, for the request's user) whether the author may create and
// update the resource's kind in every included namespace, or cluster-wide for allNamespaces and
// a namespace selector; both refuse with 403, naming the field, the namespace and the right.
// Without them, anyone who may create a ResourceDistribution writes Secrets into any namespace
// with the manager's rights.
//
// It imports apis/, controllers/setup, controllers/resourcedistribution and the admission kit;
// it must not import the manager, other webhook packages or other controllers
// (`controllers/...` other than `controllers/setup`, `controllers/resourcedistribution` and the
// shared leaves it stands on, `controllers/internal/...`, the kit `controllers/webhook/admit` and the deletion guard it holds,
// `controllers/webhook/deletionprotection`).
package resourcedistribution
