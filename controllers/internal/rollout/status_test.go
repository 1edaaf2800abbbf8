package rollout

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

type condType string

// cond has the fields of a workload API's conditions.
type cond struct {
	Type               condType
	Status             corev1.ConditionStatus
	LastTransitionTime metav1.Time
	Reason             string
	Message            string
}

var (
	then = metav1.Unix(1767225600, 0)
	now  = metav1.Unix(1767312000, 0).Time
)

// fresh is a failure condition Failures makes now.
func fresh(t condType, msg string) cond {
	return cond{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now), Reason: string(t), Message: msg}
}

func TestFailures(t *testing.T) {
	types := []condType{"FailedScale", "FailedUpdate"}
	type tcase struct {
		old    []cond
		failed map[condType]string
		want   []cond
	}
	tests := map[string]tcase{
		"a new failure is added, True since now, after the conditions that are not failures": {
			old:    []cond{{Type: "Other", Message: "kept"}},
			failed: map[condType]string{"FailedUpdate": "stuck"},
			want:   []cond{{Type: "Other", Message: "kept"}, fresh("FailedUpdate", "stuck")},
		},
		"a failure that goes on keeps its condition and transition time and takes the new message": {
			old:    []cond{{Type: "FailedScale", Status: corev1.ConditionTrue, LastTransitionTime: then, Message: "old"}},
			failed: map[condType]string{"FailedScale": "new"},
			want:   []cond{{Type: "FailedScale", Status: corev1.ConditionTrue, LastTransitionTime: then, Message: "new"}},
		},
		"a failure that is over is dropped": {
			old:  []cond{{Type: "FailedScale", Message: "old"}, {Type: "Other"}},
			want: []cond{{Type: "Other"}},
		},
		"new failures come in the order of the types": {
			failed: map[condType]string{"FailedUpdate": "u", "FailedScale": "s"},
			want:   []cond{fresh("FailedScale", "s"), fresh("FailedUpdate", "u")},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		testkit.Diff(t, "conditions", tc.want, Failures(tc.old, types, tc.failed, now))
	})
}

func TestCounts(t *testing.T) {
	var got Counts
	got.Add(true, true, true)
	got.Add(true, false, true)
	got.Add(false, false, false)
	want := Counts{Replicas: 3, Ready: 2, Available: 1, Updated: 2, UpdatedReady: 2, UpdatedAvailable: 1}
	testkit.Diff(t, "a pod counts in every count whose conditions it meets", want, got)
}

func TestStuck(t *testing.T) {
	pods := []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, {ObjectMeta: metav1.ObjectMeta{Name: "b"}}}
	type tcase struct {
		pods []*corev1.Pod
		want string
	}
	tests := map[string]tcase{
		"no stuck pod is no message": {},
		"the stuck pods are named with the revision and why": {
			pods: pods, want: "pods a, b cannot be updated in place to revision r2, and the strategy is InPlaceOnly",
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		testkit.Diff(t, "message", tc.want, Stuck(tc.pods, "r2", "the strategy is InPlaceOnly"))
	})
}

func TestConditions(t *testing.T) {
	types := []condType{"FailedScale", "FailedUpdate"}
	type tcase struct {
		stuck   string
		syncErr error
		want    []cond
	}
	tests := map[string]tcase{
		"a stuck update sets the stuck type": {
			stuck: "stuck", want: []cond{fresh("FailedUpdate", "stuck")},
		},
		"a sync failure of the stuck type, wrapped, says why over the stuck message": {
			stuck: "stuck", syncErr: errors.Join(errors.New("sync"), Fails[condType]("FailedUpdate")(errors.New("quota"))),
			want: []cond{fresh("FailedUpdate", "quota")},
		},
		"a sync failure of another type sets that type too": {
			stuck: "stuck", syncErr: Failure[condType]{Type: "FailedScale", Err: errors.New("quota")},
			want: []cond{fresh("FailedScale", "quota"), fresh("FailedUpdate", "stuck")},
		},
		"an error that is no Failure sets nothing": {syncErr: errors.New("conflict")},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		got := Conditions([]cond(nil), types, "FailedUpdate", tc.stuck, tc.syncErr, now)
		testkit.Diff(t, "conditions", tc.want, got)
	})
}

func TestReadiness(t *testing.T) {
	now := metav1.Unix(then.Unix()+60, 0).Time
	// pod is ready since then, with the in-place update gate at inPlace ("" for none).
	pod := func(inPlace corev1.ConditionStatus) *corev1.Pod {
		p := &corev1.Pod{}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: then}}
		if inPlace != "" {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: appspub.InPlaceUpdateReady, Status: inPlace})
		}
		return p
	}
	type tcase struct {
		pod      *corev1.Pod
		live     bool
		minReady int32
		want     [2]bool
	}
	tests := map[string]tcase{
		"a ready pod past minReadySeconds is ready and available":    {pod: pod(""), live: true, minReady: 30, want: [2]bool{true, true}},
		"a ready pod within minReadySeconds is ready, not available": {pod: pod(""), live: true, minReady: 120, want: [2]bool{true, false}},
		"a pod an in-place update holds unready is neither":          {pod: pod(corev1.ConditionFalse), live: true, want: [2]bool{false, false}},
		"a pod whose in-place update is done is ready and available": {pod: pod(corev1.ConditionTrue), live: true, want: [2]bool{true, true}},
		"a pod the kind does not see as live is neither":             {pod: pod(""), live: false, want: [2]bool{false, false}},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		ready, available := Readiness(tc.pod, tc.live, tc.minReady, now)
		testkit.Diff(t, "ready, available", tc.want, [2]bool{ready, available})
		var n Counts
		n.AddPod(tc.pod, tc.live, tc.minReady, now, true)
		testkit.Diff(t, "counts of the pod at the update revision", Counts{Replicas: 1, Ready: b2i(tc.want[0]), Available: b2i(tc.want[1]), Updated: 1, UpdatedReady: b2i(tc.want[0]), UpdatedAvailable: b2i(tc.want[1])}, n)
	})
}

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

func TestSelectorString(t *testing.T) {
	testkit.Diff(t, "a selector that parses", "app=web", SelectorString(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}))
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Sometimes"}}}
	testkit.Diff(t, "a selector that does not parse", "", SelectorString(bad))
}
