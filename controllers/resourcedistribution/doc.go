// Package resourcedistribution reconciles ResourceDistributions: it copies the Secret or
// ConfigMap of spec.resource into every namespace spec.targets selects and keeps the copies in
// step with the spec.
//
//   - The targets are the union of allNamespaces (every namespace but kube-system and
//     kube-public), includedNamespaces and namespaceLabelSelector, minus excludedNamespaces and
//     minus the namespaces of --resourcedistribution-excluded-namespaces (none by default, as
//     in 1.8), where copies left from before the setting are deleted.
//   - Each copy carries the annotations kruise.io/resourcedistribution.resource.from (the
//     ResourceDistribution's name) and kruise.io/resourcedistribution.resource.hashcode (a hash
//     of spec.resource) and a controller ownerReference to the ResourceDistribution, so the
//     garbage collector deletes the copies with it.
//   - An object of the same kind and name that the ResourceDistribution does not control is a
//     conflict: it is reported in the ConflictOccurred condition and never overwritten.
//   - A copy in a namespace no longer targeted is deleted.
//
// It watches ResourceDistributions and namespaces (new namespaces, label changes). The copies
// are read and written by name with an uncached reader, so the manager never lists, watches or
// caches Secrets cluster-wide; a copy changed by hand is put right on the next pass.
//
// The decisions are pure (resourcedistribution_plan.go); the reconciler reads, applies and
// writes the status when it changed.
//
// It imports apis/ and controllers/setup; it must not import the manager or another kind's
// package (`controllers/...` other than `controllers/setup` and `controllers/internal/...`).
package resourcedistribution
