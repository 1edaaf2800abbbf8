package broadcastjob

import (
	"fmt"
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/nodepin"
)

// Reasons of the job's conditions and events.
const (
	reasonDeadlineExceeded = "DeadlineExceeded"
	reasonFailedPod        = "FailedPod"
	reasonPausedOnFailure  = "Paused"
	reasonResumed          = "Continue"
)

// planInput is what one pass reads.
type planInput struct {
	job   *appsv1alpha1.BroadcastJob
	nodes []*corev1.Node
	// pods are the job's own pods.
	pods []*corev1.Pod
	now  time.Time
}

// jobEvent is one event the pass emits on the job.
type jobEvent struct {
	warning bool
	reason  string
	message string
}

// plan is what one pass does.
type plan struct {
	// deleteJob: the job finished and outlived ttlSecondsAfterFinished.
	deleteJob bool
	// create names the nodes that get a new pod, in order.
	create []string
	// delete are pods to remove: those of a failed job still running, and those whose node no
	// longer fits the template.
	delete []*corev1.Pod
	// status is the status to write.
	status appsv1alpha1.BroadcastJobStatus
	// requeueAfter is when the job must be looked at again for a deadline or its TTL; 0 means
	// only on a change.
	requeueAfter time.Duration
	events       []jobEvent
}

// finished reports whether the job holds a true Complete or Failed condition; a job with
// completion policy Never never finishes.
func finished(job *appsv1alpha1.BroadcastJob) bool {
	if job.Spec.CompletionPolicy.Type == appsv1alpha1.Never {
		return false
	}
	for _, c := range job.Status.Conditions {
		if (c.Type == appsv1alpha1.JobComplete || c.Type == appsv1alpha1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// podCounts sorts the job's pods: succeeded and failed by phase, a pod under restartPolicy
// OnFailure whose containers restarted more than restartLimit times counts as failed, and the
// other pods not being deleted are active.
func podCounts(restartLimit int32, pods []*corev1.Pod) (active, failed []*corev1.Pod, succeeded int32) {
	for _, p := range pods {
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			succeeded++
		case p.Status.Phase == corev1.PodFailed:
			failed = append(failed, p)
		case p.DeletionTimestamp != nil:
		case restartsExceeded(restartLimit, p):
			failed = append(failed, p)
		default:
			active = append(active, p)
		}
	}
	return active, failed, succeeded
}

// restartsExceeded: only OnFailure pods restart their containers, so only they can run out of
// restarts.
func restartsExceeded(limit int32, p *corev1.Pod) bool {
	if p.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		return false
	}
	var n int32
	for _, s := range p.Status.InitContainerStatuses {
		n += s.RestartCount
	}
	for _, s := range p.Status.ContainerStatuses {
		n += s.RestartCount
	}
	return n > limit
}

// parallelism is spec.parallelism against desired nodes, a percentage rounded up; unset means
// no cap.
func parallelism(job *appsv1alpha1.BroadcastJob, desired int) (int, error) {
	v := intstr.ValueOrDefault(job.Spec.Parallelism, intstr.FromInt32(math.MaxInt32))
	n, err := intstr.GetScaledValueFromIntOrPercent(v, desired, true)
	if err != nil {
		return 0, fmt.Errorf("spec.parallelism: %w", err)
	}
	return max(n, 0), nil
}

// planPass decides one pass over a BroadcastJob, as 1.8 does:
//   - a finished job is only deleted once its TTL has passed;
//   - every node the template fits is desired; a node holding the job's pod keeps it unless the
//     node stopped fitting, then the pod is deleted;
//   - a paused job, or one whose failed pod paused it (failure policy Pause), creates nothing;
//   - a failed pod under FailFast, or the active deadline passing, fails the job and deletes its
//     running pods;
//   - otherwise pods are created on the free desired nodes up to parallelism, and the job is
//     complete (policy Always) once every desired node has a pod that ended.
func planPass(in planInput) (plan, error) {
	job := in.job
	var p plan
	p.status = *job.Status.DeepCopy()
	st := &p.status
	cp := job.Spec.CompletionPolicy

	if finished(job) {
		if ttl := cp.TTLSecondsAfterFinished; ttl != nil && st.CompletionTime != nil {
			left := st.CompletionTime.Add(time.Duration(*ttl) * time.Second).Sub(in.now)
			if left <= 0 {
				p.deleteJob = true
			} else {
				p.requeueAfter = left
			}
		}
		return p, nil
	}

	if st.StartTime == nil {
		st.StartTime = &metav1.Time{Time: in.now}
	}
	if st.Phase == "" {
		st.Phase = appsv1alpha1.PhaseRunning
	}
	var deadline *time.Time
	if cp.Type != appsv1alpha1.Never && cp.ActiveDeadlineSeconds != nil {
		d := st.StartTime.Add(time.Duration(*cp.ActiveDeadlineSeconds) * time.Second)
		deadline = &d
		if left := d.Sub(in.now); left > 0 {
			p.requeueAfter = left
		}
	}

	onNode := map[string]*corev1.Pod{}
	for _, pod := range in.pods {
		onNode[nodepin.TargetNode(pod)] = pod
	}
	desired := map[string]*corev1.Pod{}
	var free []string
	var misplaced []*corev1.Pod
	for _, node := range in.nodes {
		if pod, ok := onNode[node.Name]; ok {
			if !fits(&pod.Spec, node) && pod.DeletionTimestamp == nil {
				misplaced = append(misplaced, pod)
				continue
			}
			desired[node.Name] = pod
			continue
		}
		if fits(&job.Spec.Template.Spec, node) {
			desired[node.Name] = nil
			free = append(free, node.Name)
		}
	}
	slices.Sort(free)

	activePods, failedPods, succeeded := podCounts(job.Spec.FailurePolicy.RestartLimit, in.pods)
	active, failed := int32(len(activePods)), int32(len(failedPods))
	st.Active, st.Failed, st.Succeeded, st.Desired = active, failed, succeeded, int32(len(desired))

	if st.Phase == appsv1alpha1.PhaseFailed {
		return p, nil
	}
	if job.Spec.Paused && (st.Phase == appsv1alpha1.PhaseRunning || st.Phase == appsv1alpha1.PhasePaused) {
		st.Phase = appsv1alpha1.PhasePaused
		return p, nil
	}
	if !job.Spec.Paused && st.Phase == appsv1alpha1.PhasePaused {
		st.Phase = appsv1alpha1.PhaseRunning
		p.events = append(p.events, jobEvent{reason: reasonResumed, message: "The job was resumed and runs again"})
	}

	var failReason, failMessage string
	if failed > 0 {
		switch job.Spec.FailurePolicy.Type {
		case appsv1alpha1.FailurePolicyTypePause:
			st.Phase = appsv1alpha1.PhasePaused
			p.events = append(p.events, jobEvent{warning: true, reason: reasonPausedOnFailure, message: fmt.Sprintf("Paused: %d pods failed and the failure policy is Pause", failed)})
			return p, nil
		case appsv1alpha1.FailurePolicyTypeContinue:
		default:
			failReason, failMessage = reasonFailedPod, fmt.Sprintf("%d pods failed and the failure policy is FailFast", failed)
		}
	}
	if failReason == "" && deadline != nil && !in.now.Before(*deadline) {
		failReason, failMessage = reasonDeadlineExceeded, fmt.Sprintf("The job was active longer than its activeDeadlineSeconds (%ds)", *cp.ActiveDeadlineSeconds)
	}

	if failReason != "" {
		p.delete = activePods
		st.Failed += int32(len(activePods))
		st.Active = 0
		st.Phase = appsv1alpha1.PhaseFailed
		p.finish(job, appsv1alpha1.JobFailed, failReason, failMessage, in.now)
		p.events = append(p.events, jobEvent{warning: true, reason: failReason, message: fmt.Sprintf("%s: %d pods succeeded, %d pods failed", failMessage, succeeded, st.Failed)})
		return p, nil
	}

	// Pods on nodes that no longer fit are deleted and, as in 1.8, counted as failed.
	p.delete = misplaced
	for _, pod := range misplaced {
		st.Failed++
		if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			st.Active--
		}
	}
	if len(free) > 0 && job.DeletionTimestamp == nil {
		limit, err := parallelism(job, len(desired))
		if err != nil {
			return p, err
		}
		if n := min(limit-int(st.Active), len(free)); n > 0 {
			p.create = free[:n]
			st.Active += int32(n)
		}
	}
	if cp.Type != appsv1alpha1.Never && complete(desired) {
		st.Phase = appsv1alpha1.PhaseCompleted
		msg := fmt.Sprintf("Job completed, %d pods succeeded, %d pods failed", succeeded, st.Failed)
		p.finish(job, appsv1alpha1.JobComplete, "Complete", msg, in.now)
		p.events = append(p.events, jobEvent{reason: "JobComplete", message: msg})
	}
	return p, nil
}

// complete: at least one node is desired and every desired node has a pod that ended.
func complete(desired map[string]*corev1.Pod) bool {
	if len(desired) == 0 {
		return false
	}
	for _, pod := range desired {
		if pod == nil {
			return false
		}
		ended := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed || pod.DeletionTimestamp != nil
		if !ended {
			return false
		}
	}
	return true
}

// finish sets the condition of type t, the completion time, and the wake-up for the TTL.
func (p *plan) finish(job *appsv1alpha1.BroadcastJob, t appsv1alpha1.JobConditionType, reason, message string, now time.Time) {
	ts := metav1.Time{Time: now}
	cond := appsv1alpha1.JobCondition{Type: t, Status: corev1.ConditionTrue, LastProbeTime: ts, LastTransitionTime: ts, Reason: reason, Message: message}
	p.status.Conditions = kit.SetCondition(p.status.Conditions, func(c *appsv1alpha1.JobCondition) appsv1alpha1.JobConditionType { return c.Type }, cond)
	p.status.CompletionTime = &ts
	p.requeueAfter = 0
	if ttl := job.Spec.CompletionPolicy.TTLSecondsAfterFinished; ttl != nil {
		p.requeueAfter = time.Duration(*ttl) * time.Second
		if p.requeueAfter == 0 {
			p.requeueAfter = time.Millisecond
		}
	}
}
