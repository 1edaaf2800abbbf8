package framework

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// podSummary is the part of a status these tests state expectations about.
type podSummary struct {
	Phase      corev1.PodPhase
	Conditions map[corev1.PodConditionType]corev1.ConditionStatus
	Containers map[string]containerSummary
	HasIPs     bool
}

type containerSummary struct {
	State        string // waiting, running or terminated
	Image        string
	ImageID      string
	Ready        bool
	RestartCount int32
}

func summarize(st corev1.PodStatus) podSummary {
	s := podSummary{
		Phase:      st.Phase,
		Conditions: map[corev1.PodConditionType]corev1.ConditionStatus{},
		Containers: map[string]containerSummary{},
		HasIPs:     st.PodIP != "" && st.HostIP != "" && st.StartTime != nil,
	}
	for _, c := range st.Conditions {
		s.Conditions[c.Type] = c.Status
	}
	for _, c := range st.ContainerStatuses {
		state := "waiting"
		switch {
		case c.State.Running != nil:
			state = "running"
		case c.State.Terminated != nil:
			state = "terminated"
		}
		s.Containers[c.Name] = containerSummary{State: state, Image: c.Image, ImageID: c.ImageID, Ready: c.Ready, RestartCount: c.RestartCount}
	}
	return s
}

// conds is the kubelet's conditions of a started pod: scheduled, sandbox ready, initialized,
// and the given ContainersReady and Ready.
// mainPod is the summary of a pod with IPs whose one container, main, is c.
func mainPod(phase corev1.PodPhase, conditions map[corev1.PodConditionType]corev1.ConditionStatus, c containerSummary) podSummary {
	return podSummary{Phase: phase, HasIPs: true, Conditions: conditions, Containers: map[string]containerSummary{"main": c}}
}

func conds(containersReady, ready corev1.ConditionStatus) map[corev1.PodConditionType]corev1.ConditionStatus {
	return map[corev1.PodConditionType]corev1.ConditionStatus{
		corev1.PodScheduled: T, corev1.PodReadyToStartContainers: T, corev1.PodInitialized: T,
		corev1.ContainersReady: containersReady, corev1.PodReady: ready,
	}
}

func withGate(m map[corev1.PodConditionType]corev1.ConditionStatus, gate corev1.PodConditionType, status corev1.ConditionStatus) map[corev1.PodConditionType]corev1.ConditionStatus {
	m[gate] = status
	return m
}

const (
	T = corev1.ConditionTrue
	F = corev1.ConditionFalse
)

// The delays of these tests, distinct so that a wrong one shows.
const (
	testStart       = 2 * time.Second
	testReady       = 3 * time.Second
	testImageChange = 5 * time.Second
)

// t0 is when a test's pod is first seen.
func t0() time.Time { return time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC) }

// podRun feeds each result of nextStatus back into the pod, as the simulator does after a write.
type podRun struct {
	pod *corev1.Pod
	tl  podTimeline
}

func (r *podRun) sync(now time.Time) statusOutput {
	out := nextStatus(statusInput{
		pod: r.pod, now: now, hostIP: "172.16.0.1", podIP: "10.64.0.1", runtime: "containerd",
		timing: timing{start: testStart, ready: testReady, imageChange: testImageChange, termination: -1}, timeline: r.tl,
	})
	r.pod = r.pod.DeepCopy()
	r.pod.Status = out.status
	r.tl = out.timeline
	return out
}

func newRun(pod *corev1.Pod) *podRun {
	pod.UID = types.UID("uid-1")
	return &podRun{pod: pod, tl: podTimeline{uid: pod.UID}}
}

func TestNextStatus(t *testing.T) {
	nginx1 := imageID("nginx:1")
	cases := map[string]struct {
		pod *corev1.Pod
		// before runs first, each at its offset from t0.
		before      []time.Duration
		mutate      func(*corev1.Pod)
		thenAt      []time.Duration // syncs after mutate, before at
		at          time.Duration
		want        podSummary
		wantRequeue time.Duration
	}{
		"a pod just seen is Pending with addresses and waiting containers": {
			pod:         builder.Pod("p", "ns").Image("nginx:1").Obj(),
			want:        mainPod(corev1.PodPending, conds(F, F), containerSummary{State: "waiting", Image: "nginx:1"}),
			wantRequeue: testStart,
		},
		"after the start delay the containers run but are not ready yet": {
			pod:         builder.Pod("p", "ns").Image("nginx:1").Obj(),
			before:      []time.Duration{0},
			at:          testStart,
			want:        mainPod(corev1.PodRunning, conds(F, F), containerSummary{State: "running", Image: "nginx:1", ImageID: nginx1}),
			wantRequeue: testReady,
		},
		"after the ready delay the pod is Ready": {
			pod:    builder.Pod("p", "ns").Image("nginx:1").Obj(),
			before: []time.Duration{0, testStart},
			at:     testStart + testReady,
			want:   mainPod(corev1.PodRunning, conds(T, T), containerSummary{State: "running", Image: "nginx:1", ImageID: nginx1, Ready: true}),
		},
		"a readiness gate without its condition holds Ready False": {
			pod:    builder.Pod("p", "ns").Image("nginx:1").ReadinessGate("example.com/gate").Obj(),
			before: []time.Duration{0, testStart},
			at:     testStart + testReady,
			want:   mainPod(corev1.PodRunning, conds(T, F), containerSummary{State: "running", Image: "nginx:1", ImageID: nginx1, Ready: true}),
		},
		"a readiness gate whose condition is True lets the pod be Ready, and the condition stays": {
			pod:    builder.Pod("p", "ns").Image("nginx:1").ReadinessGate("example.com/gate").Condition("example.com/gate", T).Obj(),
			before: []time.Duration{0, testStart},
			at:     testStart + testReady,
			want:   mainPod(corev1.PodRunning, withGate(conds(T, T), "example.com/gate", T), containerSummary{State: "running", Image: "nginx:1", ImageID: nginx1, Ready: true}),
		},
		"a new image in the spec stops that container and leaves the other running": {
			pod:    builder.Pod("p", "ns").Image("nginx:1").Container("side", "busybox:1").Obj(),
			before: []time.Duration{0, testStart, testStart + testReady},
			mutate: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:2" },
			at:     10 * time.Second,
			want: podSummary{Phase: corev1.PodRunning, HasIPs: true,
				Conditions: conds(F, F),
				Containers: map[string]containerSummary{
					"main": {State: "terminated", Image: "nginx:1", ImageID: nginx1},
					"side": {State: "running", Image: "busybox:1", ImageID: imageID("busybox:1"), Ready: true},
				}},
			wantRequeue: testImageChange,
		},
		"after the image change delay the new image runs with restartCount 1": {
			pod:         builder.Pod("p", "ns").Image("nginx:1").Obj(),
			before:      []time.Duration{0, testStart, testStart + testReady},
			mutate:      func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:2" },
			thenAt:      []time.Duration{10 * time.Second},
			at:          10*time.Second + testImageChange,
			want:        mainPod(corev1.PodRunning, conds(F, F), containerSummary{State: "running", Image: "nginx:2", ImageID: imageID("nginx:2"), RestartCount: 1}),
			wantRequeue: testReady,
		},
		"the not-ready knob keeps a running container not ready": {
			pod:    builder.Pod("p", "ns").Image("nginx:1").Annotation(AnnotationNotReady, "true").Obj(),
			before: []time.Duration{0, testStart},
			at:     time.Minute,
			want:   mainPod(corev1.PodRunning, conds(F, F), containerSummary{State: "running", Image: "nginx:1", ImageID: nginx1}),
		},
		"the phase knob ends the pod Failed once its containers would run": {
			pod:    builder.Pod("p", "ns").Image("nginx:1").Annotation(AnnotationPhase, "Failed").Obj(),
			before: []time.Duration{0},
			at:     testStart,
			want:   mainPod(corev1.PodFailed, conds(F, F), containerSummary{State: "terminated", Image: "nginx:1", ImageID: nginx1}),
		},
		"a start-delay knob overrides the simulator's delay": {
			pod:         builder.Pod("p", "ns").Image("nginx:1").Annotation(AnnotationStartDelay, "1m").Obj(),
			before:      []time.Duration{0},
			at:          testStart,
			want:        mainPod(corev1.PodPending, conds(F, F), containerSummary{State: "waiting", Image: "nginx:1"}),
			wantRequeue: time.Minute - testStart,
		},
		"a pod already Running when first seen is not sent back to Pending": {
			pod:         builder.Pod("p", "ns").Image("nginx:1").Phase(corev1.PodRunning).Obj(),
			at:          0,
			want:        mainPod(corev1.PodRunning, conds(F, F), containerSummary{State: "running", Image: "nginx:1", ImageID: nginx1}),
			wantRequeue: testReady,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := newRun(tc.pod)
			for _, at := range tc.before {
				r.sync(t0().Add(at))
			}
			if tc.mutate != nil {
				tc.mutate(r.pod)
			}
			for _, at := range tc.thenAt {
				r.sync(t0().Add(at))
			}
			out := r.sync(t0().Add(tc.at))
			if d := cmp.Diff(tc.want, summarize(out.status)); d != "" {
				t.Errorf("status (-want +got):\n%s", d)
			}
			if out.requeueAfter != tc.wantRequeue {
				t.Errorf("requeueAfter = %v, want %v", out.requeueAfter, tc.wantRequeue)
			}
		})
	}
}

func TestNextStatusIsStableWhenNothingIsDue(t *testing.T) {
	r := newRun(builder.Pod("p", "ns").Image("nginx:1").ReadinessGate("example.com/gate").Obj())
	for _, at := range []time.Duration{0, testStart, testStart + testReady} {
		r.sync(t0().Add(at))
	}
	before := r.pod.Status.DeepCopy()
	r.sync(t0().Add(time.Hour))
	if d := cmp.Diff(*before, r.pod.Status); d != "" {
		t.Errorf("a sync with nothing due changed the status (-before +after):\n%s", d)
	}
}

func TestRestartGivesANewContainerIDAndKeepsTheLastState(t *testing.T) {
	r := newRun(builder.Pod("p", "ns").Image("nginx:1").Obj())
	r.sync(t0())
	r.sync(t0().Add(testStart))
	first := r.pod.Status.ContainerStatuses[0]
	r.pod.Spec.Containers[0].Image = "nginx:2"
	r.sync(t0().Add(10 * time.Second))
	r.sync(t0().Add(10*time.Second + testImageChange))
	got := r.pod.Status.ContainerStatuses[0]
	if got.ContainerID == first.ContainerID || got.ContainerID == "" {
		t.Errorf("containerID = %q after a restart, want a new one (was %q)", got.ContainerID, first.ContainerID)
	}
	if got.LastTerminationState.Terminated == nil || got.LastTerminationState.Terminated.ContainerID != first.ContainerID {
		t.Errorf("lastState = %+v, want the first run, terminated", got.LastTerminationState)
	}
}

func TestAnUnpullableImageWaitsInBackOffUntilTheSpecMovesOn(t *testing.T) {
	r := newRun(builder.Pod("p", "ns").Image("nginx:1").Obj())
	r.sync(t0())
	r.sync(t0().Add(testStart))
	r.sync(t0().Add(testStart + testReady))
	r.pod.Spec.Containers[0].Image = "nginx:" + UnpullableTag
	r.sync(t0().Add(10 * time.Second))
	r.sync(t0().Add(10*time.Second + testImageChange))
	r.sync(t0().Add(time.Minute))
	want := map[string]containerSummary{"main": {State: "waiting", Image: "nginx:" + UnpullableTag}}
	if diff := cmp.Diff(want, summarize(r.pod.Status).Containers); diff != "" {
		t.Errorf("on the unpullable image (-want +got):\n%s", diff)
	}
	if w := r.pod.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ImagePullBackOff" {
		t.Errorf("waiting = %+v, want reason ImagePullBackOff", w)
	}

	r.pod.Spec.Containers[0].Image = "nginx:2"
	r.sync(t0().Add(2 * time.Minute))
	r.sync(t0().Add(2*time.Minute + testReady))
	want = map[string]containerSummary{"main": {State: "running", Image: "nginx:2", ImageID: imageID("nginx:2"), Ready: true, RestartCount: 1}}
	if diff := cmp.Diff(want, summarize(r.pod.Status).Containers); diff != "" {
		t.Errorf("once the spec names a pullable image (-want +got):\n%s", diff)
	}
}

func TestAnAliasTagHasTheImageIDOfItsImage(t *testing.T) {
	if imageID("web:2"+AliasTagSuffix) != imageID("web:2") || imageID("web:2") == imageID("web:3") {
		t.Errorf("image IDs: alias %s, image %s, other %s", imageID("web:2"+AliasTagSuffix), imageID("web:2"), imageID("web:3"))
	}
}
