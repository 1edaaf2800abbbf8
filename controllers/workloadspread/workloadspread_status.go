package workloadspread

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread/spread"
)

const (
	// CreatingTimeout is how long a pod recorded in creatingPods is awaited.
	CreatingTimeout = 30 * time.Second
	// DeletingTimeout is how long a pod recorded in deletingPods is expected to go.
	DeletingTimeout = 15 * time.Second
	// UnschedulableDuration is how long an Adaptive subset stays Schedulable=False.
	UnschedulableDuration = 300 * time.Second
)

// podEntry is one pod of a subset, as the status computation sees it.
type podEntry struct {
	pod *corev1.Pod
	// key is its name in creatingPods: the generated UID of the annotation or the pod's name.
	key string
}

// statusResult is what one status computation decided.
type statusResult struct {
	status appsv1alpha1.WorkloadSpreadStatus
	// requeueAfter is when a recorded pod expires or a subset may become schedulable again;
	// zero means no such time.
	requeueAfter time.Duration
	// reschedule are pods stuck unschedulable past rescheduleCriticalSeconds, to delete so
	// their replacements go to the next subset.
	reschedule []*corev1.Pod
}

// computeStatus returns the status of ws given its pods by subset name (all pods, active or
// not), the target's replicas and now. ws.Status is the status the webhooks last wrote.
func computeStatus(ws *appsv1alpha1.WorkloadSpread, bySubset map[string][]podEntry, replicas int32, now time.Time) (statusResult, error) {
	res := statusResult{status: appsv1alpha1.WorkloadSpreadStatus{ObservedGeneration: ws.Generation}}
	old := map[string]*appsv1alpha1.WorkloadSpreadSubsetStatus{}
	for i := range ws.Status.SubsetStatuses {
		old[ws.Status.SubsetStatuses[i].Name] = &ws.Status.SubsetStatuses[i]
	}
	soonest := func(d time.Duration) {
		if d > 0 && (res.requeueAfter == 0 || d < res.requeueAfter) {
			res.requeueAfter = d
		}
	}
	var critical time.Duration
	if a := ws.Spec.ScheduleStrategy.Adaptive; ws.Spec.ScheduleStrategy.Type == appsv1alpha1.AdaptiveWorkloadSpreadScheduleStrategyType &&
		a != nil && a.RescheduleCriticalSeconds != nil && *a.RescheduleCriticalSeconds > 0 {
		critical = time.Duration(*a.RescheduleCriticalSeconds) * time.Second
	}
	for idx := range ws.Spec.Subsets {
		s := &ws.Spec.Subsets[idx]
		limit, err := spread.MaxReplicas(s, replicas)
		if err != nil {
			return statusResult{}, err
		}
		prev := old[s.Name]
		if prev == nil {
			prev = &appsv1alpha1.WorkloadSpreadSubsetStatus{}
		}
		st := appsv1alpha1.WorkloadSpreadSubsetStatus{Name: s.Name, MissingReplicas: limit}
		creating := map[string]metav1.Time{}
		for k, v := range prev.CreatingPods {
			creating[k] = v
		}
		var stuck []*corev1.Pod
		for _, e := range bySubset[s.Name] {
			delete(creating, e.key)
			if !active(e.pod) {
				continue
			}
			st.Replicas++
			if st.MissingReplicas > 0 {
				st.MissingReplicas--
			}
			if at, ok := prev.DeletingPods[e.pod.Name]; ok {
				if left := at.Add(DeletingTimeout).Sub(now); left > 0 {
					st.DeletingPods = setTime(st.DeletingPods, e.pod.Name, at)
					if st.MissingReplicas != spread.Unlimited && st.MissingReplicas < limit {
						st.MissingReplicas++
					}
					soonest(left)
				}
			}
			if critical > 0 {
				if stuckFor, wait := unschedulableFor(e.pod, critical, now); stuckFor {
					stuck = append(stuck, e.pod)
				} else {
					soonest(wait)
				}
			}
		}
		for k, at := range creating {
			if left := at.Add(CreatingTimeout).Sub(now); left > 0 {
				st.CreatingPods = setTime(st.CreatingPods, k, at)
				if st.MissingReplicas > 0 {
					st.MissingReplicas--
				}
				soonest(left)
			}
		}
		if critical > 0 {
			last := idx == len(ws.Spec.Subsets)-1
			cond, wait := schedulable(prev, len(stuck) > 0 && !last, now)
			st.Conditions = []appsv1alpha1.WorkloadSpreadSubsetCondition{cond}
			soonest(wait)
			if !last {
				res.reschedule = append(res.reschedule, stuck...)
			}
		}
		res.status.SubsetStatuses = append(res.status.SubsetStatuses, st)
	}
	return res, nil
}

// schedulable returns the subset's Schedulable condition: False while it has stuck pods, and
// for UnschedulableDuration after it turned False; True otherwise. The transition time moves
// only when the status does. wait is how long until a False condition may turn True.
func schedulable(prev *appsv1alpha1.WorkloadSpreadSubsetStatus, stuck bool, now time.Time) (appsv1alpha1.WorkloadSpreadSubsetCondition, time.Duration) {
	var old *appsv1alpha1.WorkloadSpreadSubsetCondition
	for i := range prev.Conditions {
		if prev.Conditions[i].Type == appsv1alpha1.SubsetSchedulable {
			old = &prev.Conditions[i]
		}
	}
	want := corev1.ConditionTrue
	var wait time.Duration
	switch {
	case stuck:
		want = corev1.ConditionFalse
	case old != nil && old.Status == corev1.ConditionFalse:
		if left := old.LastTransitionTime.Add(UnschedulableDuration).Sub(now); left > 0 {
			want, wait = corev1.ConditionFalse, left
		}
	}
	cond := appsv1alpha1.WorkloadSpreadSubsetCondition{Type: appsv1alpha1.SubsetSchedulable, Status: want, LastTransitionTime: metav1.NewTime(now)}
	if old != nil && old.Status == want {
		cond = *old.DeepCopy()
	}
	if stuck {
		wait = cond.LastTransitionTime.Add(UnschedulableDuration).Sub(now)
	}
	return cond, wait
}

// unschedulableFor tells whether pod has been pending and unschedulable for critical since it
// was created; when it is unschedulable but not yet for that long, wait is the time left.
func unschedulableFor(pod *corev1.Pod, critical time.Duration, now time.Time) (bool, time.Duration) {
	if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodPending || pod.Spec.NodeName != "" {
		return false, 0
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			left := pod.CreationTimestamp.Add(critical).Sub(now)
			if left <= 0 {
				return true, 0
			}
			return false, left
		}
	}
	return false, 0
}

func active(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

func setTime(m map[string]metav1.Time, k string, v metav1.Time) map[string]metav1.Time {
	if m == nil {
		m = map[string]metav1.Time{}
	}
	m[k] = v
	return m
}
