// Package persistentpodstate reconciles PersistentPodStates. For each one it records, in
// status.podStates, the state of every Ready pod of the target StatefulSet (apps/v1 or
// Advanced, or a StatefulSet-like custom kind the kruise-configuration ConfigMap's
// PPS_Watch_Custom_Workload_WhiteList names, read on each pass, whose spec.replicas counts its
// pods from ordinal 0, its kind watched from the first pass that finds one): the node it runs
// on, that node's values of the topology keys the spec names and the pod's values of the
// annotation keys it names. The /mutate-pod step in restore writes
// that state back into a pod recreated under the same name.
//
//   - Under persistentPodStateRetentionPolicy WhenScaled (the default), the state of a pod the
//     StatefulSet scaled away is dropped; under WhenDeleted it is kept for a later scale-out.
//   - When the StatefulSet is deleted, or does not exist, every state is dropped.
//
// A second controller, the generator, keeps a PersistentPodState named after every
// StatefulSet annotated kruise.io/auto-generate-persistent-pod-state: "true" with
// kruise.io/required-persistent-topology or kruise.io/preferred-persistent-topology (and
// optionally kruise.io/persistent-pod-annotations), controlled by the StatefulSet, and deletes
// it when the annotations stop asking for it. It does the same for a whitelisted custom
// workload, which it meets through the workload's first new pod and whose kind it then watches. It writes the PersistentPodState when the
// StatefulSet appears and when one of those first three annotations changes, never on other
// StatefulSet changes, so what a user changed in it (persistentPodStateRetentionPolicy) stays.
//
// The decisions are pure (persistentpodstate_plan.go); the reconcilers read, decide and write.
//
// It imports apis/, controllers/setup and its restore sub-package, and the shared podsort and
// ordinals machinery of controllers/internal; it must not import the manager or another kind's
// package (`controllers/...` other than `controllers/setup`, `controllers/internal/...` and
// `controllers/persistentpodstate/...`).
package persistentpodstate
