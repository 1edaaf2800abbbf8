// Package daemonset is the Advanced DaemonSet controller: one pod per eligible node, updated by
// node with in-place updates, surge, node-selector batches, a partition and pausing.
//
// Each reconcile reads the nodes, the DaemonSet's pods (by the node they run on or are pinned
// to) and its revisions into a scope, moves running in-place updates and preNormal hooks along,
// plans (makePlan: a pure function of placement, pods and the update strategy) and applies the
// plan with the writer the replica workloads share (controllers/internal/podwrite), then writes
// the status once.
//
// Placement follows the built-in DaemonSet: a node is eligible when it matches the template's
// nodeName, nodeSelector and required node affinity, and the pod, with the tolerations every
// daemon pod gets (not-ready and unreachable NoExecute; disk, memory and PID pressure,
// unschedulable, and network-unavailable for host-network pods, NoSchedule), tolerates its
// taints. A NoSchedule taint keeps new pods off; an untolerated NoExecute taint, a node that
// stops matching or a deleted node removes them. Pods are named from generateName "<ds>-" and
// placed by the scheduler: their required node affinity is the one term
// matchFields metadata.name In [node].
//
// Whether an old pod updates in place (rollingUpdateType InPlaceIfPossible, a change of images
// or metadata only, and a pod that carries the InPlaceUpdateReady gate) or is recreated is
// decided once per source revision while the plan input is built (inplaceupdate.PlanUpdate).
// Every deletion, for an update, a misscheduled pod or a surplus one, goes through the preDelete
// hook (lifecycle.Next). Creation is bounded by burstReplicas and by the shared
// slowstart.MaxPerReconcile per reconcile, and made in slow-start batches that stop when the
// DaemonSet changes or goes (controllers/internal/slowstart). Every count of the spec
// (burstReplicas, partition, maxUnavailable, maxSurge) is only compared with the nodes that
// exist, so a value of 2147483647 costs nothing. With the annotation
// daemonset.kruise.io/progressive-create-pod "true", a rolling update's non-zero partition also
// holds back creation: only desired nodes less updated pods less the partition get a pod, the
// first by node name (holdBackCreation), so lowering the partition adds nodes as it updates them.
//
// With the PreDownloadImageForDaemonSetUpdate gate (and KruiseDaemon), each pass first pulls the
// update revision's images onto the nodes still to update through ImagePullJobs
// (daemonset_predownload.go over controllers/internal/predownload), and deletes them once the
// status shows every desired node at the update revision.
//
// It imports the shared machinery in controllers/internal and the API types; it must not import
// another controller package (`controllers/...` other than `controllers/internal/...` and
// `controllers/setup`).
package daemonset
