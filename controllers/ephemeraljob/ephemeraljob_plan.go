package ephemeraljob

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
)

// defaultTTL is how long a finished job is kept when ttlSecondsAfterFinished is unset, as in 1.8.
const defaultTTL = 1800 * time.Second

// defaultParallelism is how many pods run the containers at once when parallelism is unset.
const defaultParallelism = 1

// planInput is what one pass reads.
type planInput struct {
	job *appsv1alpha1.EphemeralJob
	// pods are the pods of the job's namespace its selector matches.
	pods []*corev1.Pod
	now  time.Time
}

// plan is what one pass does.
type plan struct {
	// deleteJob: the job finished and outlived its TTL.
	deleteJob bool
	// inject are the pods that get the job's ephemeral containers now.
	inject []*corev1.Pod
	// status is the status to write.
	status       appsv1alpha1.EphemeralJobStatus
	requeueAfter time.Duration
}

// podState is where the job's containers stand in one pod.
type podState int

const (
	stateNone podState = iota // not added yet, or no status reported
	stateWaiting
	stateRunning
	stateSucceeded
	stateFailed
)

// ownContainers reports whether pod holds the job's containers (by name and the job's UID in
// their environment) and whether one of the names is taken by a container the job did not add.
func ownContainers(job *appsv1alpha1.EphemeralJob, pod *corev1.Pod) (owned, conflict bool) {
	want := map[string]bool{}
	for _, c := range job.Spec.Template.EphemeralContainers {
		want[c.Name] = true
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if !want[c.Name] {
			continue
		}
		if addedBy(job, c) {
			owned = true
		} else {
			conflict = true
		}
	}
	return owned, conflict
}

func addedBy(job *appsv1alpha1.EphemeralJob, c corev1.EphemeralContainer) bool {
	for _, e := range c.Env {
		if e.Name == appsv1alpha1.EphemeralContainerEnvKey && e.Value == string(job.UID) {
			return true
		}
	}
	return false
}

// stateOf reads the job's containers' statuses in pod: one failed (non-zero exit, or a
// RunContainerError) fails the pod; all exited 0 succeeds it; else running, then waiting.
func stateOf(job *appsv1alpha1.EphemeralJob, pod *corev1.Pod) podState {
	want := map[string]bool{}
	for _, c := range job.Spec.Template.EphemeralContainers {
		want[c.Name] = true
	}
	var waiting, running, succeeded int
	for _, s := range pod.Status.EphemeralContainerStatuses {
		if !want[s.Name] {
			continue
		}
		switch st := s.State; {
		case st.Terminated != nil && st.Terminated.ExitCode != 0:
			return stateFailed
		case st.Terminated != nil:
			succeeded++
		case st.Running != nil:
			running++
		case st.Waiting != nil && st.Waiting.Reason == "RunContainerError":
			return stateFailed
		case st.Waiting != nil:
			waiting++
		}
	}
	switch {
	case succeeded > 0 && succeeded == len(want):
		return stateSucceeded
	case running > 0:
		return stateRunning
	case waiting > 0:
		return stateWaiting
	}
	return stateNone
}

func active(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// targets are the active pods the job works on: oldest first, without pods where another
// container holds one of the job's names, at most spec.replicas.
func targets(job *appsv1alpha1.EphemeralJob, pods []*corev1.Pod) []*corev1.Pod {
	sorted := append([]*corev1.Pod{}, pods...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	var out []*corev1.Pod
	for _, p := range sorted {
		if !active(p) {
			continue
		}
		if _, conflict := ownContainers(job, p); conflict {
			continue
		}
		if job.Spec.Replicas != nil && len(out) >= int(*job.Spec.Replicas) {
			break
		}
		out = append(out, p)
	}
	return out
}

// planPass decides one pass over an EphemeralJob, as 1.8 does: count the target pods by the
// state of the job's containers, derive the phase (Waiting with no match, Succeeded when every
// wanted pod succeeded, Running, Failed when every wanted pod failed or the deadline passed,
// Paused when paused, Error when the template names no container), and, unless paused or
// finished, add the containers to the next pods while fewer than parallelism pods hold
// containers that have not finished.
func planPass(in planInput) (plan, error) {
	job := in.job
	var p plan
	p.status = *job.Status.DeepCopy()
	st := &p.status

	if st.CompletionTime != nil {
		ttl := defaultTTL
		if job.Spec.TTLSecondsAfterFinished != nil {
			ttl = time.Duration(*job.Spec.TTLSecondsAfterFinished) * time.Second
		}
		if left := st.CompletionTime.Add(ttl).Sub(in.now); left > 0 {
			p.requeueAfter = left
		} else {
			p.deleteJob = true
		}
		return p, nil
	}
	if st.StartTime == nil {
		st.StartTime = &metav1.Time{Time: in.now}
	}
	if len(st.Conditions) == 0 {
		p.setCondition(appsv1alpha1.EJobInitialized, string(appsv1alpha1.EJobInitialized), "", in.now)
	}
	deadlinePassed := false
	if d := job.Spec.ActiveDeadlineSeconds; d != nil {
		left := st.StartTime.Add(time.Duration(*d) * time.Second).Sub(in.now)
		if left > 0 {
			p.requeueAfter = left
		} else {
			deadlinePassed = true
		}
	}

	tgts := targets(job, in.pods)
	var pending []*corev1.Pod
	inFlight := 0
	st.Matches, st.Waiting, st.Running, st.Succeeded, st.Failed = int32(len(tgts)), 0, 0, 0, 0
	for _, pod := range tgts {
		s := stateOf(job, pod)
		switch s {
		case stateWaiting:
			st.Waiting++
		case stateRunning:
			st.Running++
		case stateSucceeded:
			st.Succeeded++
		case stateFailed:
			st.Failed++
		}
		owned, _ := ownContainers(job, pod)
		switch {
		case !owned:
			pending = append(pending, pod)
		case s != stateSucceeded && s != stateFailed:
			inFlight++
		}
	}

	replicas := st.Matches
	if job.Spec.Replicas != nil {
		replicas = *job.Spec.Replicas
	}
	switch {
	case st.Matches == 0:
		st.Phase = appsv1alpha1.EphemeralJobWaiting
		p.setCondition(appsv1alpha1.EJobMatchedEmpty, "MatchEmpty", "The selector matches no active pod", in.now)
	case st.Succeeded > 0 && st.Succeeded == replicas:
		st.Phase = appsv1alpha1.EphemeralJobSucceeded
		st.CompletionTime = &metav1.Time{Time: in.now}
		p.setCondition(appsv1alpha1.EJobSucceeded, "JobSucceeded", "The ephemeral containers succeeded in every target pod", in.now)
	case st.Running > 0:
		st.Phase = appsv1alpha1.EphemeralJobRunning
	case st.Failed == replicas:
		st.Phase = appsv1alpha1.EphemeralJobFailed
		st.CompletionTime = &metav1.Time{Time: in.now}
		p.setCondition(appsv1alpha1.EJobFailed, "JobFailed", "The ephemeral containers failed in every target pod", in.now)
	case st.Waiting == replicas:
		st.Phase = appsv1alpha1.EphemeralJobWaiting
	default:
		st.Phase = appsv1alpha1.EphemeralJobUnknown
	}
	if job.Spec.Paused {
		st.Phase = appsv1alpha1.EphemeralJobPause
	}
	if st.Failed > 0 {
		p.setCondition(appsv1alpha1.EJobFailed, "CreateFailed", fmt.Sprintf("The ephemeral containers failed in %d pods", st.Failed), in.now)
	}
	switch st.Phase {
	case appsv1alpha1.EphemeralJobWaiting, appsv1alpha1.EphemeralJobUnknown, appsv1alpha1.EphemeralJobRunning:
		if deadlinePassed {
			st.Phase = appsv1alpha1.EphemeralJobFailed
			st.CompletionTime = &metav1.Time{Time: in.now}
			p.setCondition(appsv1alpha1.EJobFailed, "DeadlineExceeded", "The job was active longer than its activeDeadlineSeconds", in.now)
		}
	}
	if len(job.Spec.Template.EphemeralContainers) == 0 {
		st.Phase = appsv1alpha1.EphemeralJobError
		p.setCondition(appsv1alpha1.EJobError, "Error", "spec.template.ephemeralContainers names no container", in.now)
		return p, nil
	}
	if st.CompletionTime != nil {
		p.requeueAfter = defaultTTL
		if ttl := job.Spec.TTLSecondsAfterFinished; ttl != nil {
			p.requeueAfter = max(time.Duration(*ttl)*time.Second, time.Millisecond)
		}
		return p, nil
	}
	if st.Phase == appsv1alpha1.EphemeralJobPause {
		return p, nil
	}
	par := defaultParallelism
	if job.Spec.Parallelism != nil {
		par = int(*job.Spec.Parallelism)
	}
	if n := min(par-inFlight, len(pending)); n > 0 {
		p.inject = pending[:n]
	}
	return p, nil
}

// setCondition sets the condition of type t to True, keeping its transition time when it was
// True already.
func (p *plan) setCondition(t appsv1alpha1.EphemeralJobConditionType, reason, message string, now time.Time) {
	ts := metav1.Time{Time: now}
	want := appsv1alpha1.EphemeralJobCondition{Type: t, Status: corev1.ConditionTrue, LastProbeTime: ts, LastTransitionTime: ts, Reason: reason, Message: message}
	i := kit.FindCondition(p.status.Conditions, func(c *appsv1alpha1.EphemeralJobCondition) appsv1alpha1.EphemeralJobConditionType { return c.Type }, t)
	switch {
	case i < 0:
		p.status.Conditions = append(p.status.Conditions, want)
	case p.status.Conditions[i].Status != corev1.ConditionTrue || p.status.Conditions[i].Reason != reason || p.status.Conditions[i].Message != message:
		p.status.Conditions[i] = want
	}
}

// selectorOf is the job's selector; a missing or empty one matches nothing.
func selectorOf(job *appsv1alpha1.EphemeralJob) (labels.Selector, error) {
	if job.Spec.Selector == nil {
		return labels.Nothing(), nil
	}
	sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("spec.selector: %w", err)
	}
	if sel.Empty() {
		return labels.Nothing(), nil
	}
	return sel, nil
}

// withContainers is pod's ephemeral containers plus the job's, each marked with the job's UID.
func withContainers(job *appsv1alpha1.EphemeralJob, pod *corev1.Pod) []corev1.EphemeralContainer {
	out := append([]corev1.EphemeralContainer{}, pod.Spec.EphemeralContainers...)
	for _, c := range job.Spec.Template.EphemeralContainers {
		c = *c.DeepCopy()
		c.Env = append(c.Env, corev1.EnvVar{Name: appsv1alpha1.EphemeralContainerEnvKey, Value: string(job.UID)})
		out = append(out, c)
	}
	return out
}
