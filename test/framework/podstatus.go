package framework

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// podTimeline is what the simulated kubelet remembers about a pod: when, on the injected
// clock, it acted. The API keeps times to the second only, so delays are measured from here.
type podTimeline struct {
	uid            types.UID
	admittedAt     time.Time
	deletionSeenAt time.Time
	containers     map[string]containerTimeline
}

type containerTimeline struct {
	// startedAt is when the current run started; zero means long enough ago to be ready.
	startedAt time.Time
	// killedAt is when the container was stopped for an image change; zero when it was not.
	killedAt time.Time
}

func (t podTimeline) clone() podTimeline {
	c := t
	c.containers = make(map[string]containerTimeline, len(t.containers))
	for k, v := range t.containers {
		c.containers[k] = v
	}
	return c
}

// statusInput is everything the next status of a pod depends on.
type statusInput struct {
	pod      *corev1.Pod
	now      time.Time
	hostIP   string
	podIP    string
	runtime  string // scheme of container IDs, from the node
	timing   timing
	timeline podTimeline
}

// statusOutput is the status to write, the timeline to keep once it is written, and when to
// look at the pod again (zero: only when it changes).
type statusOutput struct {
	status       corev1.PodStatus
	timeline     podTimeline
	requeueAfter time.Duration
}

// nextStatus computes the status a kubelet would report for a pod that is not being deleted:
//
//   - Pending from the moment it is seen until the start delay passes, with addresses,
//     startTime and containers waiting in ContainerCreating;
//   - then Running, each container started with a deterministic imageID and containerID, and
//     ready once the ready delay has passed;
//   - a running container whose spec image differs from the image it runs is stopped, and
//     after the image change delay runs again with the new image, a new imageID and
//     containerID, and restartCount+1;
//   - Ready is True only when every container is ready and every readiness gate's condition
//     is True; conditions it does not own are kept as they are.
//
// Terminal pods are left alone: a kubelet never restarts them.
func nextStatus(in statusInput) statusOutput {
	pod := in.pod
	k, t := podKnobs(pod, in.timing)
	tl := in.timeline.clone()
	st := pod.Status.DeepCopy()
	if tl.admittedAt.IsZero() {
		tl.admittedAt = in.now
		if st.Phase == corev1.PodRunning {
			// Running before we saw it (another simulator, or this one restarted): never
			// send it back to Pending.
			tl.admittedAt = in.now.Add(-t.start)
		}
	}
	out := statusOutput{timeline: tl}
	if isTerminal(st.Phase) {
		out.status = *st
		return out
	}
	now := in.now
	setAddresses(st, in)
	if st.StartTime == nil {
		st.StartTime = metaTime(now)
	}
	setCondition(st, corev1.PodScheduled, corev1.ConditionTrue, "", "", now)
	setCondition(st, corev1.PodReadyToStartContainers, corev1.ConditionTrue, "", "", now)

	runningAt := tl.admittedAt.Add(t.start)
	if now.Before(runningAt) {
		pendingStatus(st, pod, now)
		out.status, out.requeueAfter = *st, runningAt.Sub(now)
		return out
	}
	if k.phase != "" {
		terminalStatus(st, pod, in.runtime, k.phase, now)
		out.status = *st
		return out
	}

	st.Phase = corev1.PodRunning
	var unready []string
	var requeue []time.Duration
	syncAll := func(containers []corev1.Container, prev []corev1.ContainerStatus, sidecarsOnly bool) []corev1.ContainerStatus {
		statuses := make([]corev1.ContainerStatus, 0, len(containers))
		for _, c := range containers {
			if sidecarsOnly && !isSidecar(c) {
				statuses = append(statuses, completedInitStatus(c, findStatus(prev, c.Name), pod.UID, in.runtime, runningAt))
				continue
			}
			cs, ctl, after := syncContainer(c, findStatus(prev, c.Name), tl.containers[c.Name], pod.UID, in.runtime, t, k, now)
			tl.containers[c.Name] = ctl
			if after > 0 {
				requeue = append(requeue, after)
			}
			if !cs.Ready {
				unready = append(unready, c.Name)
			}
			statuses = append(statuses, cs)
		}
		return statuses
	}
	st.InitContainerStatuses = nilIfEmpty(syncAll(pod.Spec.InitContainers, st.InitContainerStatuses, true))
	st.ContainerStatuses = nilIfEmpty(syncAll(pod.Spec.Containers, st.ContainerStatuses, false))

	setCondition(st, corev1.PodInitialized, corev1.ConditionTrue, "", "", now)
	if len(unready) > 0 {
		msg := fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
		setCondition(st, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady", msg, now)
		setCondition(st, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", msg, now)
	} else {
		setCondition(st, corev1.ContainersReady, corev1.ConditionTrue, "", "", now)
		if msg := unmetReadinessGate(pod, st); msg != "" {
			setCondition(st, corev1.PodReady, corev1.ConditionFalse, "ReadinessGatesNotReady", msg, now)
		} else {
			setCondition(st, corev1.PodReady, corev1.ConditionTrue, "", "", now)
		}
	}
	out.status, out.timeline = *st, tl
	for _, d := range requeue {
		if out.requeueAfter == 0 || d < out.requeueAfter {
			out.requeueAfter = d
		}
	}
	return out
}

// syncContainer moves one container's status along: first start, stop for a new image,
// restart with it after the delay, and readiness after the ready delay.
func syncContainer(c corev1.Container, prev *corev1.ContainerStatus, ctl containerTimeline, uid types.UID, runtime string, t timing, k knobs, now time.Time) (corev1.ContainerStatus, containerTimeline, time.Duration) {
	var cs corev1.ContainerStatus
	switch {
	case unpullable(c.Image) && (prev == nil || (prev.State.Running == nil && prev.State.Terminated == nil)):
		return pullBackOffStatus(c, prev), containerTimeline{}, 0
	case prev == nil || (prev.State.Running == nil && prev.State.Terminated == nil):
		restarts := int32(0)
		if prev != nil && prev.State.Waiting != nil && prev.State.Waiting.Reason == "ImagePullBackOff" {
			restarts = prev.RestartCount + 1
		}
		cs, ctl = runningStatus(c, uid, runtime, restarts, now), containerTimeline{startedAt: now}
		if prev != nil {
			cs.LastTerminationState = prev.LastTerminationState
		}
	default:
		cs = *prev.DeepCopy()
	}
	if cs.State.Running != nil && cs.Image != c.Image {
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode:    0,
			Reason:      "Completed",
			StartedAt:   cs.State.Running.StartedAt,
			FinishedAt:  *metaTime(now),
			ContainerID: cs.ContainerID,
		}}
		cs.Ready, cs.Started = false, ptr.To(false)
		if ctl.killedAt.IsZero() {
			ctl.killedAt = now
		}
	}
	if cs.State.Terminated != nil {
		// In a pod that is not terminal, a stopped container is one we stopped for a new image.
		if ctl.killedAt.IsZero() {
			ctl.killedAt = now
		}
		if due := ctl.killedAt.Add(t.imageChange); now.Before(due) {
			return cs, ctl, due.Sub(now)
		}
		last := cs.State
		if unpullable(c.Image) {
			cs.LastTerminationState = last
			return pullBackOffStatus(c, &cs), containerTimeline{}, 0
		}
		cs = runningStatus(c, uid, runtime, cs.RestartCount+1, now)
		cs.LastTerminationState = last
		ctl = containerTimeline{startedAt: now}
	}
	if k.keepsNotReady(c.Name) {
		cs.Ready = false
		return cs, ctl, 0
	}
	if readyAt := ctl.startedAt.Add(t.ready); !ctl.startedAt.IsZero() && now.Before(readyAt) {
		cs.Ready = false
		return cs, ctl, readyAt.Sub(now)
	}
	cs.Ready = true
	return cs, ctl, 0
}

// pullBackOffStatus is a container waiting for an image its node cannot pull: not ready, the
// spec's image, no image ID, what prev had ended with kept.
func pullBackOffStatus(c corev1.Container, prev *corev1.ContainerStatus) corev1.ContainerStatus {
	cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, Started: ptr.To(false),
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff",
			Message: fmt.Sprintf("Back-off pulling image %q", c.Image)}}}
	if prev != nil {
		cs.RestartCount, cs.LastTerminationState = prev.RestartCount, prev.LastTerminationState
	}
	return cs
}

// runningStatus is a container that has just started its restartCount-th run, reporting the
// requests and limits it started with, as a kubelet that can resize does (the apiserver takes a
// resize only for pods whose running containers report resources). The simulator never carries
// out a resize: a test plays the kubelet for it (ReportResources).
func runningStatus(c corev1.Container, uid types.UID, runtime string, restartCount int32, now time.Time) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name:         c.Name,
		Image:        c.Image,
		ImageID:      imageID(c.Image),
		ContainerID:  containerID(runtime, uid, c.Name, restartCount),
		State:        corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: *metaTime(now)}},
		Started:      ptr.To(true),
		RestartCount: restartCount,
		Resources:    &corev1.ResourceRequirements{Requests: c.Resources.Requests.DeepCopy(), Limits: c.Resources.Limits.DeepCopy()},
	}
}

// completedInitStatus is a regular init container that ran to completion before the pod's
// containers started.
func completedInitStatus(c corev1.Container, prev *corev1.ContainerStatus, uid types.UID, runtime string, at time.Time) corev1.ContainerStatus {
	if prev != nil && prev.State.Terminated != nil {
		return *prev.DeepCopy()
	}
	id := containerID(runtime, uid, c.Name, 0)
	return corev1.ContainerStatus{
		Name:    c.Name,
		Image:   c.Image,
		ImageID: imageID(c.Image),
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: *metaTime(at), FinishedAt: *metaTime(at), ContainerID: id,
		}},
		ContainerID: id,
		Started:     ptr.To(false),
	}
}

// pendingStatus is a pod whose sandbox is being set up: nothing runs yet.
func pendingStatus(st *corev1.PodStatus, pod *corev1.Pod, now time.Time) {
	st.Phase = corev1.PodPending
	reason := "ContainerCreating"
	if len(pod.Spec.InitContainers) > 0 {
		reason = "PodInitializing"
	}
	st.InitContainerStatuses = nilIfEmpty(waitingStatuses(pod.Spec.InitContainers, "PodInitializing"))
	st.ContainerStatuses = nilIfEmpty(waitingStatuses(pod.Spec.Containers, reason))
	if names := containerNames(pod.Spec.InitContainers); len(names) > 0 {
		setCondition(st, corev1.PodInitialized, corev1.ConditionFalse, "ContainersNotInitialized",
			fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(names, " ")), now)
	} else {
		setCondition(st, corev1.PodInitialized, corev1.ConditionTrue, "", "", now)
	}
	msg := fmt.Sprintf("containers with unready status: [%s]", strings.Join(containerNames(pod.Spec.Containers), " "))
	setCondition(st, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady", msg, now)
	setCondition(st, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", msg, now)
}

func waitingStatuses(containers []corev1.Container, reason string) []corev1.ContainerStatus {
	statuses := make([]corev1.ContainerStatus, 0, len(containers))
	for _, c := range containers {
		statuses = append(statuses, corev1.ContainerStatus{
			Name:    c.Name,
			Image:   c.Image,
			State:   corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}},
			Started: ptr.To(false),
		})
	}
	return statuses
}

// terminalStatus ends the pod in phase: every container that ran exits, with code 0 for
// Succeeded and 1 for Failed.
func terminalStatus(st *corev1.PodStatus, pod *corev1.Pod, runtime string, phase corev1.PodPhase, now time.Time) {
	exitCode, reason := int32(0), "Completed"
	if phase == corev1.PodFailed {
		exitCode, reason = 1, "Error"
	}
	end := func(containers []corev1.Container, prev []corev1.ContainerStatus) []corev1.ContainerStatus {
		statuses := make([]corev1.ContainerStatus, 0, len(containers))
		for _, c := range containers {
			cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: imageID(c.Image),
				ContainerID: containerID(runtime, pod.UID, c.Name, 0)}
			started := *metaTime(now)
			if p := findStatus(prev, c.Name); p != nil && (p.State.Running != nil || p.State.Terminated != nil) {
				cs = *p.DeepCopy()
				if p.State.Running != nil {
					started = p.State.Running.StartedAt
				}
				if p.State.Terminated != nil {
					statuses = append(statuses, cs)
					continue
				}
			}
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: exitCode, Reason: reason, StartedAt: started, FinishedAt: *metaTime(now), ContainerID: cs.ContainerID,
			}}
			cs.Ready, cs.Started = false, ptr.To(false)
			statuses = append(statuses, cs)
		}
		return statuses
	}
	st.Phase = phase
	st.InitContainerStatuses = nilIfEmpty(end(pod.Spec.InitContainers, st.InitContainerStatuses))
	st.ContainerStatuses = nilIfEmpty(end(pod.Spec.Containers, st.ContainerStatuses))
	setCondition(st, corev1.PodInitialized, corev1.ConditionTrue, "PodCompleted", "", now)
	setCondition(st, corev1.ContainersReady, corev1.ConditionFalse, "PodCompleted", "", now)
	setCondition(st, corev1.PodReady, corev1.ConditionFalse, "PodCompleted", "", now)
}

// unmetReadinessGate returns the kubelet's message for the first readiness gate whose
// condition is not True, or "" when all are.
func unmetReadinessGate(pod *corev1.Pod, st *corev1.PodStatus) string {
	for _, g := range pod.Spec.ReadinessGates {
		c := findCondition(st, g.ConditionType)
		if c == nil {
			return fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", g.ConditionType)
		}
		if c.Status != corev1.ConditionTrue {
			return fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", g.ConditionType, c.Status)
		}
	}
	return ""
}

func setAddresses(st *corev1.PodStatus, in statusInput) {
	if st.HostIP == "" {
		st.HostIP = in.hostIP
		st.HostIPs = []corev1.HostIP{{IP: in.hostIP}}
	}
	if st.PodIP == "" {
		ip := in.podIP
		if in.pod.Spec.HostNetwork {
			ip = in.hostIP
		}
		st.PodIP = ip
		st.PodIPs = []corev1.PodIP{{IP: ip}}
	}
}

// setCondition sets a condition's status, reason and message; the transition time moves only
// when the status does, so a repeated sync changes nothing.
func setCondition(st *corev1.PodStatus, t corev1.PodConditionType, status corev1.ConditionStatus, reason, msg string, now time.Time) {
	if c := findCondition(st, t); c != nil {
		if c.Status != status {
			c.Status = status
			c.LastTransitionTime = *metaTime(now)
		}
		c.Reason, c.Message = reason, msg
		return
	}
	st.Conditions = append(st.Conditions, corev1.PodCondition{
		Type: t, Status: status, Reason: reason, Message: msg, LastTransitionTime: *metaTime(now),
	})
}

func findCondition(st *corev1.PodStatus, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

func findStatus(statuses []corev1.ContainerStatus, name string) *corev1.ContainerStatus {
	for i := range statuses {
		if statuses[i].Name == name {
			return &statuses[i]
		}
	}
	return nil
}

func containerNames(containers []corev1.Container) []string {
	names := make([]string, 0, len(containers))
	for _, c := range containers {
		names = append(names, c.Name)
	}
	return names
}

// isSidecar reports whether an init container keeps running next to the pod's containers.
func isSidecar(c corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

func isTerminal(p corev1.PodPhase) bool {
	return p == corev1.PodSucceeded || p == corev1.PodFailed
}

// metaTime is now as the API will store it: whole seconds, so that what we compare against
// after a round trip is what we wrote.
func metaTime(now time.Time) *metav1.Time {
	t := metav1.NewTime(now.Truncate(time.Second))
	return &t
}

func nilIfEmpty(s []corev1.ContainerStatus) []corev1.ContainerStatus {
	if len(s) == 0 {
		return nil
	}
	return s
}
