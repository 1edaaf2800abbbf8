// Package controllers is the root of the kruise-manager's reconcilers: one sub-package per root
// kind (cloneset/, statefulset/, ...), webhook/ for the admission server, and internal/ for the
// machinery several workloads share (in-place update, expectations, revisions, lifecycle hooks,
// scale-down ordering). Controllers import apis/; apis/ never imports them.
//
// Reconciled today: CloneSet, DaemonSet (Advanced DaemonSet), AdvancedCronJob, ImagePullJob,
// ImageListPullJob, NodeImage and ContainerRecreateRequest (plus pod readiness). Served by the
// chart but with no package here yet: StatefulSet, SidecarSet, UnitedDeployment, WorkloadSpread, BroadcastJob,
// PodUnavailableBudget, ResourceDistribution, PersistentPodState, PodProbeMarker, NodePodProbe.
package controllers
