package uniteddeployment

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/uniteddeployment/allocate"
)

// plan is what one reconcile does to the subset workloads.
type plan struct {
	// replicas and partitions are each subset's next spec.replicas and partition.
	replicas, partitions map[string]int32
	// creates are the subsets without a workload; updates the workloads to rewrite; deletes
	// the workloads to remove (a subset's duplicates, removed subsets, other kinds).
	creates []string
	updates []subsetWorkload
	deletes []client.Object
	// subsetStatuses carry the Schedulable conditions of the Adaptive strategy.
	subsetStatuses []appsv1alpha1.UnitedDeploymentSubsetStatus
	// requeueAfter is when a pending pod times out or an unschedulable subset recovers; 0 for
	// never.
	requeueAfter time.Duration
	// allocErr says why the spec cannot be allocated; nothing is changed then.
	allocErr error
}

// decide plans the reconcile from the scope at now. It is pure.
func decide(s *scope, now time.Time) plan {
	ud := s.ud
	p := plan{}
	bySubset := map[string]subsetWorkload{}
	for _, w := range s.workloads {
		if _, dup := bySubset[w.subset]; dup {
			p.deletes = append(p.deletes, w.obj)
			continue
		}
		bySubset[w.subset] = w
	}
	wanted := map[string]bool{}
	for _, sub := range ud.Spec.Topology.Subsets {
		wanted[sub.Name] = true
	}
	for _, w := range s.workloads {
		if !wanted[w.subset] && bySubset[w.subset].obj == w.obj {
			p.deletes = append(p.deletes, w.obj)
		}
	}
	p.deletes = append(p.deletes, s.strays...)

	current, statuses, requeue := schedule(ud, bySubset, s.pods, now)
	p.subsetStatuses, p.requeueAfter = statuses, requeue
	p.replicas, p.allocErr = allocate.Replicas(allocate.Input{
		Replicas: ud.Spec.Replicas,
		Subsets:  ud.Spec.Topology.Subsets,
		Adaptive: ud.Spec.Topology.ScheduleStrategy.IsAdaptive(),
		Current:  current,
	})
	if p.allocErr != nil {
		return p
	}
	p.partitions = partitions(ud, p.replicas)
	for i := range p.subsetStatuses {
		st := &p.subsetStatuses[i]
		st.Partition = p.partitions[st.Name]
		if w, ok := bySubset[st.Name]; ok {
			st.Replicas = w.state.replicas
		}
	}
	for _, sub := range ud.Spec.Topology.Subsets {
		w, ok := bySubset[sub.Name]
		switch {
		case !ok:
			p.creates = append(p.creates, sub.Name)
		case w.obj.GetLabels()[appsv1alpha1.ControllerRevisionHashLabelKey] != s.Update.Name,
			w.state.specReplicas != p.replicas[sub.Name],
			w.state.partition != p.partitions[sub.Name],
			w.obj.GetAnnotations()[appsv1alpha1.AnnotationSubsetPatchKey] != string(sub.Patch.Raw):
			p.updates = append(p.updates, w)
		}
	}
	if ud.Spec.Topology.ScheduleStrategy.IsAdaptive() {
		// New pods may not schedule: look again when they would have timed out.
		critical := ud.Spec.Topology.ScheduleStrategy.GetRescheduleCriticalDuration()
		grows := len(p.creates) > 0
		for _, w := range p.updates {
			grows = grows || p.replicas[w.subset] > w.state.specReplicas
		}
		if grows {
			p.requeueAfter = earliest(p.requeueAfter, critical)
		}
	}
	return p
}

// partitions is each subset's manualUpdate partition, capped at its replicas.
func partitions(ud *appsv1alpha1.UnitedDeployment, replicas map[string]int32) map[string]int32 {
	out := map[string]int32{}
	us := ud.Spec.UpdateStrategy
	for _, sub := range ud.Spec.Topology.Subsets {
		var n int32
		if (us.Type == "" || us.Type == appsv1alpha1.ManualUpdateStrategyType) && us.ManualUpdate != nil {
			n = us.ManualUpdate.Partitions[sub.Name]
		}
		out[sub.Name] = min(n, replicas[sub.Name])
	}
	return out
}

// schedule works out, for the Adaptive strategy, which subsets are unschedulable now: one whose
// pods stayed unschedulable for rescheduleCriticalSeconds after creation becomes unschedulable
// (its Schedulable condition goes False), and stays so for unschedulableLastSeconds from that
// transition; then it is tried again. It returns the allocator's view of every existing subset,
// the subset statuses and when to look again (0 for never).
func schedule(ud *appsv1alpha1.UnitedDeployment, workloads map[string]subsetWorkload, pods map[string][]*corev1.Pod, now time.Time) (map[string]allocate.Current, []appsv1alpha1.UnitedDeploymentSubsetStatus, time.Duration) {
	strategy := ud.Spec.Topology.ScheduleStrategy
	var statuses []appsv1alpha1.UnitedDeploymentSubsetStatus
	for _, sub := range ud.Spec.Topology.Subsets {
		st := appsv1alpha1.UnitedDeploymentSubsetStatus{Name: sub.Name}
		if old := ud.Status.GetSubsetStatus(sub.Name); old != nil {
			st.Conditions = append(st.Conditions, old.Conditions...)
		}
		statuses = append(statuses, st)
	}
	current := map[string]allocate.Current{}
	var requeue time.Duration
	for i := range statuses {
		st := &statuses[i]
		w, ok := workloads[st.Name]
		if !ok {
			continue
		}
		cur := allocate.Current{SpecReplicas: w.state.specReplicas, Replicas: w.state.replicas}
		if strategy.IsAdaptive() {
			if c := st.GetCondition(appsv1alpha1.UnitedDeploymentSubsetSchedulable); c != nil && c.Status == corev1.ConditionFalse {
				recover := c.LastTransitionTime.Add(strategy.GetUnschedulableLastDuration())
				if now.Before(recover) {
					cur.Unschedulable = true
					requeue = earliest(requeue, recover.Sub(now))
				} else {
					setSubsetCondition(st, corev1.ConditionTrue, "recover",
						fmt.Sprintf("unschedulable subset recovered after %.0f seconds", strategy.GetUnschedulableLastDuration().Seconds()), now)
				}
			}
			if w.state.readyReplicas < w.state.replicas {
				critical := strategy.GetRescheduleCriticalDuration()
				for _, pod := range pods[st.Name] {
					timedOut, after := pendingTimeout(pod, critical, now)
					if timedOut {
						cur.PendingPods++
					} else if after > 0 {
						requeue = earliest(requeue, after)
					}
				}
				if cur.PendingPods > 0 {
					cur.Unschedulable = true
					setSubsetCondition(st, corev1.ConditionFalse, "reschedule", "timeout pending pods found", now)
					requeue = earliest(requeue, strategy.GetUnschedulableLastDuration())
				}
			}
		}
		current[st.Name] = cur
	}
	return current, statuses, requeue
}

// pendingTimeout says whether pod has failed to schedule for timeout since it was created, or
// else how long until it would (0 when it is not failing to schedule).
func pendingTimeout(pod *corev1.Pod, timeout time.Duration, now time.Time) (bool, time.Duration) {
	if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodPending || pod.Spec.NodeName != "" {
		return false, 0
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			deadline := pod.CreationTimestamp.Add(timeout)
			if deadline.Before(now) {
				return true, 0
			}
			return false, deadline.Sub(now)
		}
	}
	return false, 0
}

// setSubsetCondition sets the subset's Schedulable condition, moving its transition time only
// when the status or reason changes.
func setSubsetCondition(st *appsv1alpha1.UnitedDeploymentSubsetStatus, status corev1.ConditionStatus, reason, msg string, now time.Time) {
	typeOf := func(c *appsv1alpha1.UnitedDeploymentSubsetCondition) appsv1alpha1.UnitedDeploymentSubsetConditionType {
		return c.Type
	}
	if i := kit.FindCondition(st.Conditions, typeOf, appsv1alpha1.UnitedDeploymentSubsetSchedulable); i >= 0 {
		if c := &st.Conditions[i]; c.Status != status || c.Reason != reason {
			c.Status, c.Reason, c.Message, c.LastTransitionTime = status, reason, msg, metav1.NewTime(now)
		}
		return
	}
	st.Conditions = append(st.Conditions, appsv1alpha1.UnitedDeploymentSubsetCondition{
		Type: appsv1alpha1.UnitedDeploymentSubsetSchedulable, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(now),
	})
}

// earliest is the sooner of two requeue delays, 0 meaning none.
func earliest(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}
