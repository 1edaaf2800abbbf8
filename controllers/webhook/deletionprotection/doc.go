// Package deletionprotection enforces the policy.kruise.io/delete-protection label on deletion.
//
//   - Always refuses the deletion of any labelled object the add-on guards, until the label is
//     removed.
//   - Cascading refuses it while the object still holds something: a workload (Deployment,
//     ReplicaSet, StatefulSet, CloneSet, Advanced StatefulSet, UnitedDeployment) with
//     spec.replicas above 0; a Namespace with active pods or Bound PersistentVolumeClaims; a
//     CustomResourceDefinition with custom resources (only with the
//     DeletionProtectionForCRDCascadingGate gate). Services and Ingresses know only Always.
//
// The checks (Workload, Namespace, CRD, AlwaysOnly) are used by the add-on's own kinds' webhooks
// and by this package's handler, which serves the 1.8 DELETE webhooks for the Kubernetes kinds.
// All of them answer through a Guard (guard.go): it skips every request while
// ResourcesDeletionProtection is off, and turns a check's verdict into the response. Every
// refusal is logged (who, what, why) under the logger name "deletion-protection", so an
// operator can collect them from the manager's log, and counted in 1.8's metrics
// namespace_deletion_protection, crd_deletion_protection and workload_deletion_protection
// (metrics.go).
//
// As in 1.8, a protected object keeps the namespace it lives in Terminating: the namespace
// controller's deletion of it is refused like anyone's, until the label is removed. With
// --deletion-protection-allow-in-terminating-namespace the Guard reads the namespace of an
// object whose deletion a check refused, and lets the deletion through when that namespace is
// being deleted; the namespace's own deletion was admitted, so its content goes with it.
//
// It imports apis/, controllers/setup, features/ and internal/promreg; it must not import the manager, other
// webhook packages or any controller (`controllers/...` other than `controllers/setup`).
package deletionprotection
