package advancedcronjob

import (
	"sort"
	"time"

	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// runPlan is what one reconcile does.
type runPlan struct {
	// prune are finished children beyond the history limits, oldest first.
	prune []client.Object
	// replace are active children to delete first (concurrencyPolicy Replace).
	replace []client.Object
	// run, when set, is the scheduled time of the job to create now.
	run *time.Time
	// next is when the following run is due; zero when paused.
	next time.Time
	// skip says why a due run is not started, for the event and the log.
	skip string
}

// planRun decides, from the children and the time, which children to prune and whether to
// start a run. sched is nil when paused.
func planRun(acj *appsv1alpha1.AdvancedCronJob, children []child, sched cron.Schedule, now time.Time) (runPlan, error) {
	var p runPlan
	var active, succeeded, failed []child
	for _, c := range children {
		switch c.state {
		case childActive:
			active = append(active, c)
		case childSucceeded:
			succeeded = append(succeeded, c)
		case childFailed:
			failed = append(failed, c)
		}
	}
	p.prune = append(oldest(failed, acj.Spec.FailedJobsHistoryLimit), oldest(succeeded, acj.Spec.SuccessfulJobsHistoryLimit)...)
	if sched == nil {
		return p, nil
	}

	missed, next, err := nextRuns(acj, sched, lastScheduled(acj, children), now)
	if err != nil {
		return p, err
	}
	p.next = next
	switch {
	case missed.IsZero():
	case acj.Spec.StartingDeadlineSeconds != nil && missed.Add(time.Duration(*acj.Spec.StartingDeadlineSeconds)*time.Second).Before(now):
		p.skip = "missed the starting deadline"
	case acj.Spec.ConcurrencyPolicy == appsv1alpha1.ForbidConcurrent && len(active) > 0:
		p.skip = "concurrencyPolicy Forbid and a job is still active"
	default:
		if acj.Spec.ConcurrencyPolicy == appsv1alpha1.ReplaceConcurrent {
			for _, c := range active {
				p.replace = append(p.replace, c.obj)
			}
		}
		p.run = &missed
	}
	return p, nil
}

// oldest returns the finished children beyond limit, oldest first; a nil limit keeps all.
func oldest(finished []child, limit *int32) []client.Object {
	if limit == nil || int32(len(finished)) <= *limit {
		return nil
	}
	sort.SliceStable(finished, func(i, j int) bool { return olderThan(finished[i], finished[j]) })
	var out []client.Object
	for _, c := range finished[:int32(len(finished))-*limit] {
		out = append(out, c.obj)
	}
	return out
}

// olderThan orders children by start time; start times have a one-second grain, so ties
// fall to the scheduled run, then the name.
func olderThan(a, b child) bool {
	if !a.started.Equal(b.started) {
		return a.started.Before(b.started)
	}
	if a.scheduledAt != nil && b.scheduledAt != nil && !a.scheduledAt.Equal(*b.scheduledAt) {
		return a.scheduledAt.Before(*b.scheduledAt)
	}
	return a.obj.GetName() < b.obj.GetName()
}

// lastScheduled is the latest run known, from the status or a child's annotation; the status
// keeps it when the history limits have pruned every child.
func lastScheduled(acj *appsv1alpha1.AdvancedCronJob, children []child) *time.Time {
	var last *time.Time
	if t := acj.Status.LastScheduleTime; t != nil {
		last = &t.Time
	}
	for _, c := range children {
		if c.scheduledAt != nil && (last == nil || c.scheduledAt.After(*last)) {
			last = c.scheduledAt
		}
	}
	return last
}

// computeStatus is the status after the plan ran: children still active, the latest run and
// the template's kind.
func computeStatus(acj *appsv1alpha1.AdvancedCronJob, children []child, created client.Object, p runPlan) appsv1alpha1.AdvancedCronJobStatus {
	st := appsv1alpha1.AdvancedCronJobStatus{Type: templateKind(acj)}
	gone := map[client.Object]bool{}
	for _, o := range p.replace {
		gone[o] = true
	}
	kind := string(templateKind(acj))
	apiVersion := appsv1alpha1.GroupVersion.String()
	if templateKind(acj) == appsv1alpha1.JobTemplate {
		apiVersion = "batch/v1"
	}
	ref := func(o client.Object) corev1.ObjectReference {
		return corev1.ObjectReference{Kind: kind, APIVersion: apiVersion, Namespace: o.GetNamespace(), Name: o.GetName(), UID: o.GetUID()}
	}
	for _, c := range children {
		if c.state == childActive && !gone[c.obj] {
			st.Active = append(st.Active, ref(c.obj))
		}
	}
	if created != nil {
		st.Active = append(st.Active, ref(created))
	}
	sort.Slice(st.Active, func(i, j int) bool { return st.Active[i].Name < st.Active[j].Name })
	last := lastScheduled(acj, children)
	if p.run != nil && (last == nil || p.run.After(*last)) {
		last = p.run
	}
	if last != nil {
		t := metav1.NewTime(last.UTC())
		st.LastScheduleTime = &t
	}
	return st
}
