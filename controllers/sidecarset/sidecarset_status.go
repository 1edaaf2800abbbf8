package sidecarset

import (
	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// computeStatus counts a SidecarSet's matched pods (the active pods it was injected into):
// updated ones run its latest hash; ready ones are Ready; updatedReady ones are both, with
// their sidecar update settled. latestRevision names the revision of the current spec.
func computeStatus(s *appsv1alpha1.SidecarSet, pods []*corev1.Pod, latestRevision string, collisionCount *int32) appsv1alpha1.SidecarSetStatus {
	st := appsv1alpha1.SidecarSetStatus{
		ObservedGeneration: s.Generation,
		LatestRevision:     latestRevision,
		CollisionCount:     collisionCount,
	}
	for _, pod := range pods {
		st.MatchedPods++
		updated := podUpdated(s, pod)
		ready := podReady(pod)
		if updated {
			st.UpdatedPods++
		}
		if ready {
			st.ReadyPods++
		}
		if updated && ready && sidecarsSettled(s, pod) {
			st.UpdatedReadyPods++
		}
	}
	return st
}
