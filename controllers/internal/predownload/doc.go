// Package predownload pulls the images of a workload's new revision onto the nodes of its pods
// that still run an older one, before an in-place update reaches them. It is on when kruise-daemon
// runs and the PreDownloadImageForInPlaceUpdate feature is enabled (Enabled). It decides once per
// update revision whether to pre-download, records the decision as a label on that
// ControllerRevision, and creates one ImagePullJob per changed container image, owned by the
// workload. When the workload's revisions agree again, its jobs are deleted. CloneSet and Advanced
// StatefulSet use it; it must not import a controller package (`controllers/...` other than
// `controllers/internal/...`).
package predownload
