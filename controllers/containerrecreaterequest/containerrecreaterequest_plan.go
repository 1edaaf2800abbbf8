package containerrecreaterequest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcontainer"
)

// responseTimeout is how long the daemon may leave a new request without a phase before the
// request is completed as failed, as in 1.8.
const responseTimeout = time.Minute

// Messages of the completions the controller decides, as 1.8 words them.
const (
	msgPodGone          = "pod has gone"
	msgNoResponse       = "daemon has not responded for a long time"
	msgDeadlineExceeded = "recreating has exceeded the activeDeadlineSeconds"
)

// plan is what one reconcile does to a request and its pod.
type plan struct {
	// release removes this request's not-ready key from the pod and the finalizer.
	release bool
	// dropActiveLabel removes crr.apps.kruise.io/active.
	dropActiveLabel bool
	// delete deletes the request (ttlSecondsAfterFinished passed).
	delete bool
	// complete moves the request to Completed with completeMessage. The container states stay
	// as the daemon wrote them, past activeDeadlineSeconds too, as in 1.8.
	complete        bool
	completeMessage string
	// phase, when set, is written as the request's new phase (the daemon has started).
	phase appsv1alpha1.ContainerRecreateRequestPhase
	// syncStatuses, when non-nil, is the new sync-container-statuses annotation.
	syncStatuses *string
	// acquire holds the pod not-ready and records when in the unready-acquired annotation.
	acquire bool
	// requeueAfter is when to look again even if nothing changes.
	requeueAfter time.Duration
}

// decide is the pure core of the controller: from the request, its pod (nil when not found)
// and the time, what to do.
func decide(crr *appsv1alpha1.ContainerRecreateRequest, pod *corev1.Pod, now time.Time) plan {
	var p plan
	if crr.DeletionTimestamp != nil || crr.Status.CompletionTime != nil {
		p.release = slices.Contains(crr.Finalizers, appsv1alpha1.ContainerRecreateRequestUnreadyAcquiredKey)
		if crr.DeletionTimestamp != nil {
			return p
		}
		_, p.dropActiveLabel = crr.Labels[appsv1alpha1.ContainerRecreateRequestActiveKey]
		if ttl := crr.Spec.TTLSecondsAfterFinished; ttl != nil {
			left := time.Duration(*ttl)*time.Second - now.Sub(crr.Status.CompletionTime.Time)
			if left <= 0 {
				p.delete = true
			} else {
				p.requeueAfter = left
			}
		}
		return p
	}

	if pod == nil || pod.DeletionTimestamp != nil || string(pod.UID) != crr.Labels[appsv1alpha1.ContainerRecreateRequestPodUIDKey] {
		return plan{complete: true, completeMessage: msgPodGone}
	}
	var wait waiter
	age := now.Sub(crr.CreationTimestamp.Time)
	if crr.Status.Phase == "" && len(crr.Status.ContainerRecreateStates) == 0 {
		if left := responseTimeout - age; left <= 0 {
			return plan{complete: true, completeMessage: msgNoResponse}
		} else {
			wait.at(left)
		}
	}
	if d := crr.Spec.ActiveDeadlineSeconds; d != nil {
		if left := time.Duration(*d)*time.Second - age; left <= 0 {
			return plan{complete: true, completeMessage: msgDeadlineExceeded}
		} else {
			wait.at(left)
		}
	}

	phase := crr.Status.Phase
	if phase != appsv1alpha1.ContainerRecreateRequestRecreating && len(crr.Status.ContainerRecreateStates) > 0 {
		phase = appsv1alpha1.ContainerRecreateRequestRecreating
		p.phase = phase
	}
	if phase != appsv1alpha1.ContainerRecreateRequestRecreating {
		p.requeueAfter = wait.d
		return p
	}

	if done, msg, left := finished(crr, pod, now); done {
		return plan{complete: true, completeMessage: msg}
	} else if left > 0 {
		wait.at(left)
	}
	if s := syncStatuses(crr, pod); s != crr.Annotations[appsv1alpha1.ContainerRecreateRequestSyncContainerStatusesKey] {
		p.syncStatuses = &s
	}
	p.acquire = strategy(crr).UnreadyGracePeriodSeconds != nil && crr.Annotations[appsv1alpha1.ContainerRecreateRequestUnreadyAcquiredKey] == ""
	p.requeueAfter = wait.d
	return p
}

// finished says whether the daemon's per-container states are final: every container
// Succeeded or Failed, or one Failed under failurePolicy Fail. A Succeeded container counts
// only once it has run for minStartedSeconds; left is how long until the next one does.
func finished(crr *appsv1alpha1.ContainerRecreateRequest, pod *corev1.Pod, now time.Time) (done bool, msg string, left time.Duration) {
	states := crr.Status.ContainerRecreateStates
	if len(states) < len(crr.Spec.Containers) {
		return false, "", 0
	}
	minStarted := time.Duration(strategy(crr).MinStartedSeconds) * time.Second
	var failed []string
	final := 0
	for _, s := range states {
		switch s.Phase {
		case appsv1alpha1.ContainerRecreateRequestFailed:
			failed = append(failed, failure(s))
			if strategy(crr).FailurePolicy != appsv1alpha1.ContainerRecreateRequestFailurePolicyIgnore {
				return true, "recreation failed: " + strings.Join(failed, "; "), 0
			}
			final++
		case appsv1alpha1.ContainerRecreateRequestSucceeded:
			if minStarted > 0 {
				st := podcontainer.Status(pod, s.Name)
				if st == nil || st.State.Running == nil {
					continue
				}
				if l := minStarted - now.Sub(st.State.Running.StartedAt.Time); l > 0 {
					if left == 0 || l < left {
						left = l
					}
					continue
				}
			}
			final++
		}
	}
	if final < len(states) {
		return false, "", left
	}
	if len(failed) > 0 {
		return true, "recreation failed, ignored by failurePolicy: " + strings.Join(failed, "; "), 0
	}
	return true, "", 0
}

func failure(s appsv1alpha1.ContainerRecreateRequestContainerRecreateState) string {
	if s.Message == "" {
		return s.Name
	}
	return fmt.Sprintf("%s: %s", s.Name, s.Message)
}

// syncStatuses renders the annotation the daemon reads: the pod's running containers of the
// request that started after the request was created.
func syncStatuses(crr *appsv1alpha1.ContainerRecreateRequest, pod *corev1.Pod) string {
	out := make([]appsv1alpha1.ContainerRecreateRequestSyncContainerStatus, 0, len(crr.Spec.Containers))
	for _, c := range crr.Spec.Containers {
		st := podcontainer.Status(pod, c.Name)
		if st == nil || st.State.Running == nil || st.State.Running.StartedAt.Before(&crr.CreationTimestamp) {
			continue
		}
		out = append(out, appsv1alpha1.ContainerRecreateRequestSyncContainerStatus{
			Name: st.Name, Ready: st.Ready, RestartCount: st.RestartCount, ContainerID: st.ContainerID,
		})
	}
	b, _ := json.Marshal(out) // a slice of plain structs always encodes
	return string(b)
}

func strategy(crr *appsv1alpha1.ContainerRecreateRequest) appsv1alpha1.ContainerRecreateRequestStrategy {
	if crr.Spec.Strategy == nil {
		return appsv1alpha1.ContainerRecreateRequestStrategy{}
	}
	return *crr.Spec.Strategy
}

// waiter keeps the soonest of several deadlines.
type waiter struct{ d time.Duration }

func (w *waiter) at(d time.Duration) {
	if d > 0 && (w.d == 0 || d < w.d) {
		w.d = d
	}
}
