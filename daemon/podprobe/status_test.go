package podprobe

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestBuildStatus(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Minute))
	spec := appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{{
		Namespace: "ns", Name: "a", UID: "ua", IP: "10.0.0.1",
		Probes: []appsv1alpha1.ContainerProbe{{Name: "m#x", ContainerName: "main"}, {Name: "m#y", ContainerName: "main"}},
	}}}
	kx := probeKey{namespace: "ns", pod: "a", uid: "ua", ip: "10.0.0.1", container: "main", probe: "m#x"}
	state := func(name string, s appsv1alpha1.ProbeState, msg string, probed, moved metav1.Time) appsv1alpha1.ContainerProbeState {
		return appsv1alpha1.ContainerProbeState{Name: name, State: s, Message: msg, LastProbeTime: probed, LastTransitionTime: moved}
	}
	status := func(states ...appsv1alpha1.ContainerProbeState) appsv1alpha1.NodePodProbeStatus {
		if len(states) == 0 {
			return appsv1alpha1.NodePodProbeStatus{}
		}
		return appsv1alpha1.NodePodProbeStatus{PodProbeStatuses: []appsv1alpha1.PodProbeStatus{{Namespace: "ns", Name: "a", UID: "ua", ProbeStates: states}}}
	}
	type tcase struct {
		cur     appsv1alpha1.NodePodProbeStatus
		results map[probeKey]result
		want    appsv1alpha1.NodePodProbeStatus
	}
	cases := map[string]tcase{
		"a first result is written with both times set": {
			results: map[probeKey]result{kx: {state: appsv1alpha1.ProbeSucceeded, at: t0}},
			want:    status(state("m#x", appsv1alpha1.ProbeSucceeded, "", t0, t0)),
		},
		"the same state again moves only the probe time": {
			cur:     status(state("m#x", appsv1alpha1.ProbeSucceeded, "", t0, t0)),
			results: map[probeKey]result{kx: {state: appsv1alpha1.ProbeSucceeded, at: t1}},
			want:    status(state("m#x", appsv1alpha1.ProbeSucceeded, "", t1, t0)),
		},
		"a new state moves the transition time and carries the message": {
			cur:     status(state("m#x", appsv1alpha1.ProbeSucceeded, "", t0, t0)),
			results: map[probeKey]result{kx: {state: appsv1alpha1.ProbeFailed, msg: "exit 1", at: t1}},
			want:    status(state("m#x", appsv1alpha1.ProbeFailed, "exit 1", t1, t1)),
		},
		"states of probes and pods the spec no longer holds are dropped": {
			cur: appsv1alpha1.NodePodProbeStatus{PodProbeStatuses: []appsv1alpha1.PodProbeStatus{
				{Namespace: "ns", Name: "a", UID: "ua", ProbeStates: []appsv1alpha1.ContainerProbeState{
					state("m#gone", appsv1alpha1.ProbeFailed, "", t0, t0), state("m#y", appsv1alpha1.ProbeFailed, "", t0, t0)}},
				{Namespace: "ns", Name: "old", UID: "uo", ProbeStates: []appsv1alpha1.ContainerProbeState{state("m#x", appsv1alpha1.ProbeFailed, "", t0, t0)}},
			}},
			results: map[probeKey]result{{namespace: "ns", pod: "old", uid: "uo", probe: "m#x"}: {state: appsv1alpha1.ProbeSucceeded, at: t1}},
			want:    status(state("m#y", appsv1alpha1.ProbeFailed, "", t0, t0)),
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		got := buildStatus(spec, tc.cur, tc.results)
		testkit.Diff(t, "status", tc.want, got)
	})
}
