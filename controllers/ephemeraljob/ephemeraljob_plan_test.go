package ephemeraljob

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func ejob(change func(*appsv1alpha1.EphemeralJobSpec)) *appsv1alpha1.EphemeralJob {
	j := &appsv1alpha1.EphemeralJob{
		ObjectMeta: metav1.ObjectMeta{Name: "debug", Namespace: "ns", UID: "uid-1"},
		Spec: appsv1alpha1.EphemeralJobSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: appsv1alpha1.EphemeralContainerTemplateSpec{EphemeralContainers: []corev1.EphemeralContainer{
				{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "probe", Image: "busybox"}},
			}},
		},
	}
	if change != nil {
		change(&j.Spec)
	}
	return j
}

// target is a running pod created age ago; with state it already holds the job's container in
// that state ("" for no status yet).
func target(name string, age time.Duration, state string) *corev1.Pod {
	p := builder.Pod(name, "ns").Label("app", "web").Phase(corev1.PodRunning).Obj()
	p.CreationTimestamp = metav1.Time{Time: now.Add(-age)}
	if state == "none" {
		return p
	}
	p.Spec.EphemeralContainers = withContainers(ejob(nil), &corev1.Pod{})
	var s corev1.ContainerState
	switch state {
	case "waiting":
		s.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	case "running":
		s.Running = &corev1.ContainerStateRunning{}
	case "succeeded":
		s.Terminated = &corev1.ContainerStateTerminated{ExitCode: 0, FinishedAt: metav1.Time{Time: now}}
	case "failed":
		s.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.Time{Time: now}}
	}
	if state != "" {
		p.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "probe", State: s}}
	}
	return p
}

func TestPlanPass(t *testing.T) {
	started := appsv1alpha1.EphemeralJobStatus{StartTime: &metav1.Time{Time: now.Add(-time.Minute)}}
	type tcase struct {
		job        *appsv1alpha1.EphemeralJob
		pods       []*corev1.Pod
		wantInject []string
		wantPhase  appsv1alpha1.EphemeralJobPhase
		// wantCounts are match, waiting, running, succeeded, failed.
		wantCounts [5]int32
		wantDelete bool
		wantDone   bool
	}
	tests := map[string]tcase{
		"with the default parallelism of one, the oldest matched pod gets the containers first": {
			job:        ejob(nil),
			pods:       []*corev1.Pod{target("young", time.Second, "none"), target("old", time.Hour, "none")},
			wantInject: []string{"old"},
			wantPhase:  appsv1alpha1.EphemeralJobUnknown,
			wantCounts: [5]int32{2, 0, 0, 0, 0},
		},
		"parallelism counts pods whose containers have not finished": {
			job:        ejob(func(s *appsv1alpha1.EphemeralJobSpec) { s.Parallelism = ptr.To[int32](2) }),
			pods:       []*corev1.Pod{target("a", 3*time.Hour, "running"), target("b", 2*time.Hour, "none"), target("c", time.Hour, "none")},
			wantInject: []string{"b"},
			wantPhase:  appsv1alpha1.EphemeralJobRunning,
			wantCounts: [5]int32{3, 0, 1, 0, 0},
		},
		"a finished pod frees its parallelism slot": {
			job:        ejob(nil),
			pods:       []*corev1.Pod{target("a", 2*time.Hour, "succeeded"), target("b", time.Hour, "none")},
			wantInject: []string{"b"},
			wantPhase:  appsv1alpha1.EphemeralJobUnknown,
			wantCounts: [5]int32{2, 0, 0, 1, 0},
		},
		"replicas limits the target pods to the oldest ones": {
			job: ejob(func(s *appsv1alpha1.EphemeralJobSpec) {
				s.Replicas = ptr.To[int32](1)
				s.Parallelism = ptr.To[int32](5)
			}),
			pods:       []*corev1.Pod{target("young", time.Second, "none"), target("old", time.Hour, "none")},
			wantInject: []string{"old"},
			wantPhase:  appsv1alpha1.EphemeralJobUnknown,
			wantCounts: [5]int32{1, 0, 0, 0, 0},
		},
		"every target pod succeeded: the job succeeded": {
			job:        ejob(nil),
			pods:       []*corev1.Pod{target("a", time.Hour, "succeeded"), target("b", time.Hour, "succeeded")},
			wantPhase:  appsv1alpha1.EphemeralJobSucceeded,
			wantCounts: [5]int32{2, 0, 0, 2, 0},
			wantDone:   true,
		},
		"every target pod failed: the job failed": {
			job:        ejob(nil),
			pods:       []*corev1.Pod{target("a", time.Hour, "failed")},
			wantPhase:  appsv1alpha1.EphemeralJobFailed,
			wantCounts: [5]int32{1, 0, 0, 0, 1},
			wantDone:   true,
		},
		"waiting containers are counted as waiting": {
			job:        ejob(nil),
			pods:       []*corev1.Pod{target("a", time.Hour, "waiting")},
			wantPhase:  appsv1alpha1.EphemeralJobWaiting,
			wantCounts: [5]int32{1, 1, 0, 0, 0},
		},
		"no matched pod: the job waits": {
			job:        ejob(nil),
			wantPhase:  appsv1alpha1.EphemeralJobWaiting,
			wantCounts: [5]int32{0, 0, 0, 0, 0},
		},
		"a pod whose container of that name another owner added is not a target": {
			job: ejob(nil),
			pods: []*corev1.Pod{func() *corev1.Pod {
				p := target("other", time.Hour, "none")
				p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "probe", Image: "x"}}}
				return p
			}()},
			wantPhase:  appsv1alpha1.EphemeralJobWaiting,
			wantCounts: [5]int32{0, 0, 0, 0, 0},
		},
		"a paused job adds nothing": {
			job:        ejob(func(s *appsv1alpha1.EphemeralJobSpec) { s.Paused = true }),
			pods:       []*corev1.Pod{target("a", time.Hour, "none")},
			wantPhase:  appsv1alpha1.EphemeralJobPause,
			wantCounts: [5]int32{1, 0, 0, 0, 0},
		},
		"the active deadline passing fails the job": {
			job: func() *appsv1alpha1.EphemeralJob {
				j := ejob(func(s *appsv1alpha1.EphemeralJobSpec) { s.ActiveDeadlineSeconds = ptr.To[int64](30) })
				j.Status = started
				return j
			}(),
			pods:       []*corev1.Pod{target("a", time.Hour, "running")},
			wantPhase:  appsv1alpha1.EphemeralJobFailed,
			wantCounts: [5]int32{1, 0, 1, 0, 0},
			wantDone:   true,
		},
		"a finished job past its TTL is deleted": {
			job: func() *appsv1alpha1.EphemeralJob {
				j := ejob(func(s *appsv1alpha1.EphemeralJobSpec) { s.TTLSecondsAfterFinished = ptr.To[int32](10) })
				j.Status = appsv1alpha1.EphemeralJobStatus{Phase: appsv1alpha1.EphemeralJobSucceeded, CompletionTime: &metav1.Time{Time: now.Add(-10 * time.Second)}}
				return j
			}(),
			wantPhase:  appsv1alpha1.EphemeralJobSucceeded,
			wantDelete: true,
			wantDone:   true,
		},
		"without a TTL a finished job is kept 1800 seconds": {
			job: func() *appsv1alpha1.EphemeralJob {
				j := ejob(nil)
				j.Status = appsv1alpha1.EphemeralJobStatus{Phase: appsv1alpha1.EphemeralJobSucceeded, CompletionTime: &metav1.Time{Time: now.Add(-1700 * time.Second)}}
				return j
			}(),
			wantPhase: appsv1alpha1.EphemeralJobSucceeded,
			wantDone:  true,
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		p, err := planPass(planInput{job: tt.job, pods: tt.pods, now: now})
		if err != nil {
			t.Fatal(err)
		}
		var inject []string
		for _, pod := range p.inject {
			inject = append(inject, pod.Name)
		}
		st := p.status
		type result struct {
			Inject []string
			Phase  appsv1alpha1.EphemeralJobPhase
			Counts [5]int32
			Delete bool
			Done   bool
		}
		want := result{tt.wantInject, tt.wantPhase, tt.wantCounts, tt.wantDelete, tt.wantDone}
		got := result{inject, st.Phase, [5]int32{st.Matches, st.Waiting, st.Running, st.Succeeded, st.Failed}, p.deleteJob, st.CompletionTime != nil}
		testkit.Diff(t, "plan", want, got)
	})
}

func TestWithContainersMarksThemWithTheJobUID(t *testing.T) {
	pod := target("a", time.Hour, "none")
	got := withContainers(ejob(nil), pod)
	if len(got) != 1 || !addedBy(ejob(nil), got[0]) {
		t.Fatalf("containers %+v: want probe marked with %s=uid-1", got, appsv1alpha1.EphemeralContainerEnvKey)
	}
	if owned, conflict := ownContainers(ejob(nil), &corev1.Pod{Spec: corev1.PodSpec{EphemeralContainers: got}}); !owned || conflict {
		t.Errorf("owned %v, conflict %v: want owned and no conflict", owned, conflict)
	}
}
