// Package rollout is what the workloads that roll pods out to a revision (CloneSet, Advanced
// StatefulSet, Advanced DaemonSet) share between their plan and their status, all of it pure:
// the strategy's int-or-percent figures as pod counts, the soonest requeue a pass asks for, the
// replica counts by readiness, availability and revision, the failure conditions a failed sync
// sets and a good one drops, and the message of an update that cannot go in place. What a kind
// counts beyond these (StatefulSet's currentReplicas) and when its current revision moves stay
// the kind's own. It must not import any controller package (`controllers/...` other than
// `controllers/internal/...`).
package rollout
