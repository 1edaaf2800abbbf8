// Package controllers is the root of the kruise-manager's reconcilers: one sub-package per root
// kind (cloneset/, statefulset/, ...), webhook/ for the admission server, and internal/ for the
// machinery several workloads share (in-place update, expectations, revisions, lifecycle hooks,
// scale-down ordering). Controllers import apis/, never the other way round (apis/doc.go).
//
// A kind is one package with a SetupWithManager(mgr, setup.Deps) and one line in
// manager/components.go, which also names the feature gates it needs; the manager fills Deps
// completely and skips a controller whose gate is off.
//
// Reconciled today: CloneSet, Advanced StatefulSet, Advanced DaemonSet, UnitedDeployment, AdvancedCronJob,
// BroadcastJob, EphemeralJob, ImagePullJob, ImageListPullJob, NodeImage,
// ContainerRecreateRequest and SidecarSet (injection through the sidecarset/inject pod-webhook
// step; job sidecars stopped by sidecarterminator/, behind SidecarTerminator), plus pod readiness and container launch priority (launchpriority/), and WorkloadSpread
// (workloadspread/, whose pod webhook parts in workloadspread/placement join /mutate-pod and
// /validate-pod), ResourceDistribution (resourcedistribution/, behind ResourceDistributionGate)
// and PersistentPodState (persistentpodstate/, whose pod webhook step in
// persistentpodstate/restore runs last in /mutate-pod), PodProbeMarker (podprobemarker/
// writes NodePodProbe specs, nodepodprobe/ marks pods from their results), and
// PodUnavailableBudget (podunavailablebudget/, with its pod webhook parts in
// podunavailablebudget/guard and the check writers share in internal/pubcheck).
package controllers
