// Package workloadref resolves a workload reference (a pod's controller, or a targetRef of
// apiVersion, kind and name in a namespace) to the workload it names: its kind, UID, desired
// replicas, selector and own controller. PodUnavailableBudget, WorkloadSpread, PersistentPodState
// and the PodUnavailableBudget controller's watches use it, each with the kinds it accepts.
//
// The built-in kinds are CloneSet, Advanced StatefulSet, Deployment, ReplicaSet, StatefulSet and
// Job; a Deployment's pods are found through their ReplicaSet (Finder.ControllerOf climbs one
// owner). Custom workloads are those a Whitelist names, read from the
// WorkloadSpread_Watch_Custom_Workload_WhiteList (WorkloadSpread) or
// PPS_Watch_Custom_Workload_WhiteList (PersistentPodState) key of the kruise-configuration
// ConfigMap in the manager's namespace; their replicas come from the whitelisted replicasPath
// (spec.replicas for PersistentPodState's).
//
// A Finder reads from its readers in order (the manager's cache, then the apiserver where a
// caller must see an object the cache may not have yet); it never chooses a read path itself.
//
// It imports only the API types and machinery; it must not import a controller package
// (`controllers/...` other than `controllers/internal/...`).
package workloadref
