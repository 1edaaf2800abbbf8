package containerrecreate

import (
	"encoding/json"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/daemon/cri"
)

// phaseWeight orders CRRs of one pod: finished ones first (they are skipped), then the one
// already recreating, then pending ones, then new ones.
func phaseWeight(p appsv1alpha1.ContainerRecreateRequestPhase) int {
	switch p {
	case appsv1alpha1.ContainerRecreateRequestCompleted, appsv1alpha1.ContainerRecreateRequestSucceeded, appsv1alpha1.ContainerRecreateRequestFailed:
		return 1
	case appsv1alpha1.ContainerRecreateRequestRecreating:
		return 2
	case appsv1alpha1.ContainerRecreateRequestPending:
		return 3
	}
	return 4
}

// sortCRRs orders a pod's CRRs by phase weight, then by creation.
func sortCRRs(crrs []appsv1alpha1.ContainerRecreateRequest) {
	sort.SliceStable(crrs, func(i, j int) bool {
		wi, wj := phaseWeight(crrs[i].Status.Phase), phaseWeight(crrs[j].Status.Phase)
		if wi != wj {
			return wi < wj
		}
		return crrs[i].CreationTimestamp.Before(&crrs[j].CreationTimestamp)
	})
}

// syncStatuses reads the pod's container statuses the manager copies onto the CRR.
func syncStatuses(crr *appsv1alpha1.ContainerRecreateRequest) map[string]appsv1alpha1.ContainerRecreateRequestSyncContainerStatus {
	raw := crr.Annotations[appsv1alpha1.ContainerRecreateRequestSyncContainerStatusesKey]
	if raw == "" {
		return nil
	}
	var list []appsv1alpha1.ContainerRecreateRequestSyncContainerStatus
	if json.Unmarshal([]byte(raw), &list) != nil {
		return nil
	}
	out := make(map[string]appsv1alpha1.ContainerRecreateRequestSyncContainerStatus, len(list))
	for _, s := range list {
		out[s.Name] = s
	}
	return out
}

// currentStates computes each container's recreate state from what the runtime runs now:
// finished states stay; a container not found on the node is Pending; one not running is
// being recreated; under forceRecreate, as in 1.8, one running that the CRR has not stopped yet
// waits to be stopped (Pending) whatever its ID; one running with another ID, a higher restart
// count, or started after the CRR was created has been recreated, and is Succeeded once the pod
// reports it ready with that ID and it has run for minStartedSeconds; otherwise it still waits
// to be stopped (Pending).
func currentStates(crr *appsv1alpha1.ContainerRecreateRequest, running map[string]*cri.Container, now time.Time) []appsv1alpha1.ContainerRecreateRequestContainerRecreateState {
	var minStarted time.Duration
	force := false
	if crr.Spec.Strategy != nil {
		minStarted = time.Duration(crr.Spec.Strategy.MinStartedSeconds) * time.Second
		force = crr.Spec.Strategy.ForceRecreate
	}
	synced := syncStatuses(crr)
	out := make([]appsv1alpha1.ContainerRecreateRequestContainerRecreateState, 0, len(crr.Spec.Containers))
	for i := range crr.Spec.Containers {
		c := &crr.Spec.Containers[i]
		prev := previousState(crr, c.Name)
		if prev != nil && (prev.Phase == appsv1alpha1.ContainerRecreateRequestSucceeded || prev.Phase == appsv1alpha1.ContainerRecreateRequestFailed) {
			out = append(out, *prev)
			continue
		}
		st := appsv1alpha1.ContainerRecreateRequestContainerRecreateState{Name: c.Name, Phase: appsv1alpha1.ContainerRecreateRequestPending}
		if prev != nil {
			st.IsKilled = prev.IsKilled
		}
		rc := running[c.Name]
		switch {
		case rc == nil:
			st.Message = "not found container on Node"
		case !rc.Running():
			st.Phase = appsv1alpha1.ContainerRecreateRequestRecreating
		case force && !st.IsKilled:
			// Stays Pending: the CRR stops it even if it started after the CRR was made.
		case c.StatusContext != nil && (rc.FullID != c.StatusContext.ContainerID ||
			rc.RestartCount > c.StatusContext.RestartCount ||
			rc.StartedAt.After(crr.CreationTimestamp.Time)):
			st.Phase = appsv1alpha1.ContainerRecreateRequestRecreating
			if s, ok := synced[c.Name]; ok && s.ContainerID == rc.FullID && s.Ready && now.Sub(rc.StartedAt) > minStarted {
				st.Phase = appsv1alpha1.ContainerRecreateRequestSucceeded
			}
		}
		out = append(out, st)
	}
	return out
}

func previousState(crr *appsv1alpha1.ContainerRecreateRequest, name string) *appsv1alpha1.ContainerRecreateRequestContainerRecreateState {
	for i := range crr.Status.ContainerRecreateStates {
		if crr.Status.ContainerRecreateStates[i].Name == name {
			return &crr.Status.ContainerRecreateStates[i]
		}
	}
	return nil
}

// recheckAfter is when a request in progress on pod is looked at again. A pod whose phase is
// final never has a container started again (the SidecarTerminator's requests stop the
// sidecars of such pods), so what the daemon reads of it cannot change: it is not polled.
func recheckAfter(pod *corev1.Pod) time.Duration {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return 0
	}
	return recheckInterval
}
