// Package statefulset is the Advanced StatefulSet controller (apps.kruise.io StatefulSet, stored
// as v1beta1, served as v1alpha1 too). Each reconcile reads the set's pods (adopting orphans
// named <set>-<ordinal> that match its selector and releasing its pods that no longer do), the
// claims of its volumeClaimTemplates and its revisions into a scope; moves running in-place
// updates and lifecycle hooks along; plans (a pure function of spec, pods and revisions); applies
// the plan with the writer the replica workloads share (controllers/internal/podwrite); and
// writes the status once.
//
// Pods are named <set>-<ordinal>. The replicas take the first spec.replicas ordinals from
// spec.ordinals.start (with the StatefulSetStartOrdinal gate) that spec.reserveOrdinals does not
// reserve; a pod on any other ordinal is deleted. OrderedReady creates and removes pods one at a
// time, in order, and halts while a pod is not running and ready; Parallel creates them all at
// once, bounded by scaleStrategy.maxUnavailable. A pod with the apps.kruise.io/specified-delete
// label is deleted and made again on its ordinal, within the update's maxUnavailable. Each
// ordinal has one PVC per volume claim template, named <template>-<set>-<ordinal>, which a
// recreated pod reuses; persistentVolumeClaimRetentionPolicy whenScaled Delete deletes the claims
// of removed ordinals, and whenDeleted Delete makes the set own its claims so that the garbage
// collector removes them with it.
//
// RollingUpdate moves the replicas at or above the partition to the update revision, the highest
// ordinal first (or in unorderedUpdate.priorityStrategy order), at most maxUnavailable at a time
// (Parallel; else one), unless paused; OnDelete never moves a pod, and pods made again take the
// update revision. Whether a pod updates in place or is recreated is decided once per source
// revision (inplaceupdate.PlanUpdate) from podUpdatePolicy; an InPlaceOnly change that cannot go
// in place is a plan outcome: FailedUpdatePod, an event, and no pod touched. Lifecycle hooks are
// routed by lifecycle.Next as for the CloneSet: a recreate goes through preDelete, the
// inPlaceUpdate hook holds only pods that update in place.
//
// With StatefulSetAutoResizePVCGate and volumeClaimUpdateStrategy OnPodRollingUpdate, the
// rolling update also grows PVCs: a pod whose PVCs request less storage than their templates has
// them updated to the templates' resources (annotated apps.kruise.io/owned-by-asts; refused when
// the StorageClass does not allow volume expansion, FailedUpdatePVC when a PVC differs in more
// than its size), counts as unavailable while a PVC's capacity is below its request, and is
// updated only once its PVCs have the capacity or a FileSystemResizePending condition. A pod
// already at the update revision only has its PVCs grown. status.volumeClaims counts, per
// template, the pods whose PVCs are compatible (as large as the template) and ready (with that
// capacity), gate or not; PVC changes wake the set.
//
// The replicas' ordinals are arithmetic over spec.reserveOrdinals (controllers/internal/ordinals),
// never a list: a reconcile's work and memory are bounded by the pods that exist and one
// reconcile's share of creations, so spec.replicas 2147483647 costs no more than 10. Pods are
// created in bounded slow-start batches (controllers/internal/slowstart), at most
// slowstart.MaxPerReconcile per reconcile, that stop when the set's spec changes or it is deleted.
//
// It imports the shared machinery in controllers/internal and the API types; it must not import
// another controller package (`controllers/...` other than `controllers/internal/...` and
// `controllers/setup`).
package statefulset
