// Package resourcedistribution holds the ResourceDistribution validating admission handler
// ("/validate-apps-kruise-io-v1alpha1-resourcedistribution"): spec.resource must be a v1
// Secret or ConfigMap with a name that the apiserver would accept (checked by a dry-run
// creation in the manager's namespace), its apiVersion, kind and name never change, and the
// targets are well formed (namespace names, no namespace both included and excluded, a valid
// label selector). Validation is a pure function; the handler only decodes, dry-runs and
// answers. The manager serves it only while ResourceDistributionGate is on.
//
// It imports apis/, controllers/setup and controllers/resourcedistribution; it must not import
// the manager, other webhook packages or other controllers (`controllers/...` other than
// `controllers/setup` and `controllers/resourcedistribution`).
package resourcedistribution
