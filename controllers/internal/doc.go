// Package internal holds the machinery the workload controllers share: the kit every
// controller's Reconcile is built on (its prologue, set-up, status write, the pass of a
// pod-owning workload and condition helpers, in kit), what the pod-owning workloads' reconcilers
// hold alike and their run of that pass (podowner), the unit tests' table runner (testkit), expectations (waiting for
// the cache to see our own writes), ownedpods (the pod event handler that feeds them and the
// reconcile prologue that waits on them), revision history, in-place update, lifecycle hooks, the
// scale-down order, bounded slow-start pod creation (slowstart), and pod conditions and readiness
// gates (podcondition, which also holds the shared KruisePodReady hold and the status write that
// retries a conflict with the kubelet), and image pre-download before in-place updates
// (predownload), pinning per-node pods to their node (nodepin), the Step and Check contract
// by which kinds join the pod admission webhooks (podadmission), resolving a pod's owner or a
// targetRef to its workload, replicas and selector (workloadref), the group commit of the
// status changes that pod admissions make to one object at once (groupcommit), the apply step of the replica
// workloads' plans (podwrite), and what their plans and statuses share: strategy figures, the
// soonest requeue, replica counts and failure conditions (rollout), and the fake clients of their
// unit tests (testclient). Each sub-package is small
// and knows nothing of a particular workload kind; none of them imports a controller package.
package internal
