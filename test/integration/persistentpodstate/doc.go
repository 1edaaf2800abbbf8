// Package persistentpodstate proves PersistentPodState against the real apiserver, the real
// kube-scheduler and simulated nodes in three zones: the controller records the zone and the
// chosen annotations of each Ready pod of an Advanced StatefulSet, the /mutate-pod step puts a
// recreated pod back in its zone with its annotations, WhenScaled drops the state of pods
// scaled away, workload annotations generate a PersistentPodState, and the webhook keeps one
// per workload.
package persistentpodstate
