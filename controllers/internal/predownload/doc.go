// Package predownload pulls the images of a workload's new revision onto the nodes of its pods
// that still run an older one, before the update reaches them. It is on when kruise-daemon runs
// and the workload's feature is enabled: PreDownloadImageForInPlaceUpdate for CloneSet and
// Advanced StatefulSet (Enabled), PreDownloadImageForDaemonSetUpdate for Advanced DaemonSet
// (EnabledForDaemonSet). It decides once per update revision whether to pre-download, records
// the decision as a label on that ControllerRevision, and creates one ImagePullJob per changed
// container image, owned by the workload. When the workload's rollout is over, its jobs are
// deleted. It must not import a controller package (`controllers/...` other than
// `controllers/internal/...`).
package predownload
