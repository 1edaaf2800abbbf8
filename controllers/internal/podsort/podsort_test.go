package podsort

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

var now = time.Unix(10000, 0)

type podOpt func(*corev1.Pod)

func pod(name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))}}
	p.Spec.NodeName = "node"
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func unassigned(p *corev1.Pod) { p.Spec.NodeName = "" }
func pending(p *corev1.Pod)    { p.Status.Phase = corev1.PodPending; p.Status.Conditions = nil }
func notReady(p *corev1.Pod)   { p.Status.Conditions[0].Status = corev1.ConditionFalse }
func cost(c string) podOpt {
	return func(p *corev1.Pod) { p.Annotations = map[string]string{DeletionCostAnnotation: c} }
}
func created(ago time.Duration) podOpt {
	return func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(now.Add(-ago)) }
}
func readyFor(d time.Duration) podOpt {
	return func(p *corev1.Pod) { p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-d)) }
}
func label(k, v string) podOpt {
	return func(p *corev1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[k] = v
	}
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func TestForDeletion(t *testing.T) {
	type tcase struct {
		pods []*corev1.Pod
		want []string
	}
	tests := map[string]tcase{
		"unassigned goes before pending, pending before not ready, not ready before ready": {
			pods: []*corev1.Pod{pod("ready"), pod("not-ready", notReady), pod("pending", pending), pod("unassigned", unassigned, pending)},
			want: []string{"unassigned", "pending", "not-ready", "ready"},
		},
		"a lower deletion cost goes first among ready pods": {
			pods: []*corev1.Pod{pod("keep", cost("100")), pod("default"), pod("cheap", cost("-5"))},
			want: []string{"cheap", "default", "keep"},
		},
		"deletion cost does not outrank readiness": {
			pods: []*corev1.Pod{pod("cheap-ready", cost("-100")), pod("dear-not-ready", notReady, cost("100"))},
			want: []string{"dear-not-ready", "cheap-ready"},
		},
		"a malformed deletion cost counts as zero": {
			pods: []*corev1.Pod{pod("bad", cost("abc")), pod("neg", cost("-1"))},
			want: []string{"neg", "bad"},
		},
		"ready for a shorter time goes first": {
			pods: []*corev1.Pod{pod("long", readyFor(time.Hour)), pod("short", readyFor(time.Minute))},
			want: []string{"short", "long"},
		},
		"newer goes before older when all else is equal": {
			pods: []*corev1.Pod{pod("old", created(2*time.Hour)), pod("new", created(time.Minute))},
			want: []string{"new", "old"},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		ForDeletion(tc.pods)
		testkit.Diff(t, "order", tc.want, names(tc.pods))
	})
}

func TestForUpdate(t *testing.T) {
	weight := &appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{
		{Weight: 50, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"tier": "canary"}}},
	}}
	order := &appspub.UpdatePriorityStrategy{OrderPriority: []appspub.UpdatePriorityOrderTerm{{OrderedKey: "rank"}}}
	type tcase struct {
		pods     []*corev1.Pod
		priority *appspub.UpdatePriorityStrategy
		scatter  []ScatterTerm
		want     []string
	}
	tests := map[string]tcase{
		"unavailable pods are updated first": {
			pods: []*corev1.Pod{pod("a"), pod("b", notReady)},
			want: []string{"b", "a"},
		},
		"a higher weight is updated first": {
			pods:     []*corev1.Pod{pod("a"), pod("canary", label("tier", "canary"))},
			priority: weight,
			want:     []string{"canary", "a"},
		},
		"a higher ordered value is updated first": {
			pods:     []*corev1.Pod{pod("r1", label("rank", "1")), pod("r10", label("rank", "10")), pod("none")},
			priority: order,
			want:     []string{"r10", "r1", "none"},
		},
		"scatter spreads the matching pods over the order": {
			pods: []*corev1.Pod{
				pod("a1", label("g", "a"), created(6*time.Hour)), pod("a2", label("g", "a"), created(5*time.Hour)),
				pod("b1", created(4*time.Hour)), pod("b2", created(3*time.Hour)), pod("b3", created(2*time.Hour)), pod("b4", created(time.Hour)),
			},
			scatter: []ScatterTerm{{Key: "g", Value: "a"}},
			want:    []string{"b1", "a1", "b2", "b3", "a2", "b4"},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		ForUpdate(tc.pods, tc.priority, tc.scatter, 0, now)
		testkit.Diff(t, "order", tc.want, names(tc.pods))
	})
}

func TestIsAvailable(t *testing.T) {
	type tcase struct {
		pod  *corev1.Pod
		min  int32
		want bool
	}
	tests := map[string]tcase{
		"ready with no minReadySeconds is available": {pod: pod("a", readyFor(time.Second)), want: true},
		"ready for less than minReadySeconds is not": {pod: pod("a", readyFor(5*time.Second)), min: 10},
		"ready for longer than minReadySeconds is":   {pod: pod("a", readyFor(15*time.Second)), min: 10, want: true},
		"not ready is never available":               {pod: pod("a", notReady)},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		if got := IsAvailable(tc.pod, tc.min, now); got != tc.want {
			t.Fatalf("IsAvailable() = %v, want %v", got, tc.want)
		}
	})
}
