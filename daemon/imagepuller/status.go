package imagepuller

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// tagKey names one tag of one image.
type tagKey struct {
	Image, Tag string
}

// buildStatus computes the NodeImage status from its spec and the puller's per-tag states:
// every tag of the spec appears once, in spec order, with the state of its current version
// (Waiting when the puller has not taken it up yet); tags gone from the spec are dropped.
func buildStatus(spec appsv1alpha1.NodeImageSpec, states map[tagKey]appsv1alpha1.ImageTagStatus, prev appsv1alpha1.NodeImageStatus, now metav1.Time) appsv1alpha1.NodeImageStatus {
	out := appsv1alpha1.NodeImageStatus{FirstSyncStatus: prev.FirstSyncStatus}
	if out.FirstSyncStatus == nil {
		out.FirstSyncStatus = &appsv1alpha1.SyncStatus{SyncAt: now, Status: appsv1alpha1.SyncStatusSucceeded}
	}
	images := make([]string, 0, len(spec.Images))
	for img := range spec.Images {
		images = append(images, img)
	}
	sort.Strings(images)
	for _, img := range images {
		var tags []appsv1alpha1.ImageTagStatus
		for _, t := range spec.Images[img].Tags {
			st, ok := states[tagKey{img, t.Tag}]
			if !ok || st.Version != t.Version {
				st = appsv1alpha1.ImageTagStatus{Tag: t.Tag, Phase: appsv1alpha1.ImagePhaseWaiting, Version: t.Version}
			}
			out.Desired++
			switch st.Phase {
			case appsv1alpha1.ImagePhaseSucceeded:
				out.Succeeded++
			case appsv1alpha1.ImagePhaseFailed:
				out.Failed++
			case appsv1alpha1.ImagePhasePulling:
				out.Pulling++
			default:
				out.Waiting++
			}
			tags = append(tags, st)
		}
		if len(tags) == 0 {
			continue
		}
		if out.ImageStatuses == nil {
			out.ImageStatuses = map[string]appsv1alpha1.ImageStatus{}
		}
		out.ImageStatuses[img] = appsv1alpha1.ImageStatus{Tags: tags}
	}
	return out
}

// adoptable reports whether a status entry left by an earlier daemon run already answers the
// tag spec, so that a restart does not pull finished tags again.
func adoptable(prev appsv1alpha1.NodeImageStatus, image string, t appsv1alpha1.ImageTagSpec) (appsv1alpha1.ImageTagStatus, bool) {
	for _, st := range prev.ImageStatuses[image].Tags {
		if st.Tag == t.Tag && st.Version == t.Version &&
			(st.Phase == appsv1alpha1.ImagePhaseSucceeded || st.Phase == appsv1alpha1.ImagePhaseFailed) {
			return st, true
		}
	}
	return appsv1alpha1.ImageTagStatus{}, false
}
