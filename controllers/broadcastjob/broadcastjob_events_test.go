package broadcastjob

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// TestPlanPassEvents: the events a pass emits on the job, by reason, as 1.8 emits them.
func TestPlanPassEvents(t *testing.T) {
	paused := func(specPaused bool) *appsv1alpha1.BroadcastJob {
		s := running(now)
		s.Phase = appsv1alpha1.PhasePaused
		return kinds.BroadcastJob("job", "ns").UID("uid-1").CompletionPolicy(appsv1alpha1.Always).
			FailurePolicy(appsv1alpha1.FailurePolicyTypeFailFast, 0).Paused(specPaused).Status(s).Obj()
	}
	tests := map[string]struct {
		job  *appsv1alpha1.BroadcastJob
		pods []*corev1.Pod
		want []string
	}{
		"a paused job that is resumed reports Continue": {job: paused(false), want: []string{"Normal Continue"}},
		"a job that stays paused reports nothing":       {job: paused(true)},
		// The failure policy pauses the job in its status only, so the next pass resumes it and
		// pauses it again, reporting both, as 1.8 does.
		"a job its failure policy paused reports Continue, then Paused again": {
			job: func() *appsv1alpha1.BroadcastJob {
				j := paused(false)
				j.Spec.FailurePolicy.Type = appsv1alpha1.FailurePolicyTypePause
				return j
			}(),
			pods: []*corev1.Pod{jobPod("node-0", corev1.PodFailed)},
			want: []string{"Normal Continue", "Warning Paused"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := planPass(planInput{job: tc.job, nodes: nodes("node-0"), pods: tc.pods, now: now})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range p.events {
				typ := corev1.EventTypeNormal
				if e.warning {
					typ = corev1.EventTypeWarning
				}
				got = append(got, typ+" "+e.reason)
			}
			testkit.Diff(t, "events", tc.want, got)
		})
	}
}
