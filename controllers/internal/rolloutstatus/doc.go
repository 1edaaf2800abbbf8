// Package rolloutstatus is the status computation that the workloads which roll pods out to a
// revision (CloneSet, Advanced StatefulSet) share: the replica counts by readiness, availability
// and revision, the failure conditions a failed sync sets and a good one drops, and the message of
// an update that cannot go in place. It is pure. What a kind counts beyond these (StatefulSet's
// currentReplicas) and when its current revision moves stay the kind's own. It must not import
// any controller package (`controllers/...` other than `controllers/internal/...`).
package rolloutstatus
