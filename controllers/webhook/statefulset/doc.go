// Package statefulset serves the Advanced StatefulSet admission webhooks at 1.8's unversioned
// paths, /mutate-apps-kruise-io-statefulset and /validate-apps-kruise-io-statefulset, for both
// served versions (v1beta1, the storage version, and v1alpha1, whose spec is the same type).
//
// Defaulting does what 1.8 does: podManagementPolicy OrderedReady, updateStrategy RollingUpdate
// with partition 0, maxUnavailable 1, podUpdatePolicy ReCreate and minReadySeconds 0, replicas 1,
// revisionHistoryLimit 10, with StatefulSetAutoDeletePVC a Retain/Retain
// persistentVolumeClaimRetentionPolicy, with StatefulSetAutoResizePVCGate volumeClaimUpdateStrategy
// OnDelete, and, unless TemplateNoDefaults is on, the core pod and claim defaults in the pod and
// volume claim templates on create and on a pod template change. Like 1.8 it does not add the
// InPlaceUpdateReady readiness gate to the template: validation refuses InPlaceIfPossible and
// InPlaceOnly without it, so that the user sees the gate their pods will carry. Validation reports
// every problem at once, each naming its field (validateStatefulSet). With
// StatefulSetAutoResizePVCGate and volumeClaimUpdateStrategy OnPodRollingUpdate, a change of the
// volume claim templates may only change their storage size, and only where the StorageClass (read
// live) does not forbid volume expansion (validateClaimTemplatesUpdate).
//
// The admission kit (controllers/webhook/admit) decodes and answers, and the shared deletion
// protection guard answers deletions. It imports the API types, the kit, the guard and the shared
// ordinal parser (controllers/internal/ordinals); it must not import another webhook package
// (`controllers/webhook/...` other than `controllers/webhook/admit`,
// `controllers/webhook/podtemplate`, `controllers/webhook/coredefaults` and
// `controllers/webhook/deletionprotection`).
package statefulset
