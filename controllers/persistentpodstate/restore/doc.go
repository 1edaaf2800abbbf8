// Package restore is PersistentPodState's part of the /mutate-pod webhook, last of 1.8's
// steps: a pod created by a StatefulSet (apps/v1 or Advanced) that a PersistentPodState
// targets, and whose name has a recorded state, gets
//   - a nodeSelector for the recorded values of requiredPersistentTopology's node labels,
//   - a preferred node affinity term per preferredPersistentTopology entry, with its weight,
//   - the recorded persistentPodAnnotations it does not carry already,
//   - and the annotation kruise.io/injected-persistent-pod-state naming the PersistentPodState.
//
// A whitelisted StatefulSet-like custom workload's pods are served the same way (Targets reads
// the kruise-configuration ConfigMap's PPS_Watch_Custom_Workload_WhiteList, only for a pod whose
// custom workload a PersistentPodState targets).
//
// It also holds ForWorkload, how the controller and the step find the PersistentPodState of a
// workload, and Supported, Targets and SameWorkload, the kinds a PersistentPodState may target
// and how two references compare, answered by controllers/internal/workloadref.
//
// It imports apis/, controllers/setup and controllers/internal/podadmission (for the Step
// interface); it must not import the manager or another kind's package (`controllers/...` other
// than `controllers/setup` and `controllers/internal/...`).
package restore
