package podunavailablebudget

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

func TestComputeStatus(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	ready := func(name string) *corev1.Pod {
		return builder.Pod(name, "ns").Phase(corev1.PodRunning).Condition(corev1.PodReady, corev1.ConditionTrue).Obj()
	}
	notReady := func(name string) *corev1.Pod { return builder.Pod(name, "ns").Phase(corev1.PodRunning).Obj() }
	pub := func(max, min *intstr.IntOrString, disrupted, unavailable map[string]metav1.Time) *policyv1alpha1.PodUnavailableBudget {
		p := &policyv1alpha1.PodUnavailableBudget{ObjectMeta: metav1.ObjectMeta{Name: "pub", Namespace: "ns", Generation: 3}}
		p.Spec.MaxUnavailable, p.Spec.MinAvailable = max, min
		p.Status.DisruptedPods, p.Status.UnavailablePods = disrupted, unavailable
		return p
	}
	one, pct25, pct50 := intstr.FromInt32(1), intstr.FromString("25%"), intstr.FromString("50%")
	tests := map[string]struct {
		pub         *policyv1alpha1.PodUnavailableBudget
		pods        []*corev1.Pod
		total       int32
		want        policyv1alpha1.PodUnavailableBudgetStatus
		wantRecheck time.Time
	}{
		"maxUnavailable 1 of 4 ready pods leaves room for one": {
			pub: pub(&one, nil, nil, nil), pods: []*corev1.Pod{ready("a"), ready("b"), ready("c"), ready("d")}, total: 4,
			want: policyv1alpha1.PodUnavailableBudgetStatus{ObservedGeneration: 3, TotalReplicas: 4, DesiredAvailable: 3, CurrentAvailable: 4, UnavailableAllowed: 1},
		},
		"a percentage of maxUnavailable is rounded up": {
			pub: pub(&pct25, nil, nil, nil), pods: []*corev1.Pod{ready("a"), ready("b"), ready("c"), ready("d"), ready("e")}, total: 5,
			want: policyv1alpha1.PodUnavailableBudgetStatus{ObservedGeneration: 3, TotalReplicas: 5, DesiredAvailable: 3, CurrentAvailable: 5, UnavailableAllowed: 2},
		},
		"minAvailable 50% of 3 desires two": {
			pub: pub(nil, &pct50, nil, nil), pods: []*corev1.Pod{ready("a"), ready("b"), ready("c")}, total: 3,
			want: policyv1alpha1.PodUnavailableBudgetStatus{ObservedGeneration: 3, TotalReplicas: 3, DesiredAvailable: 2, CurrentAvailable: 3, UnavailableAllowed: 1},
		},
		"a pod that is not ready is not available, and the room never goes below zero": {
			pub: pub(&one, nil, nil, nil), pods: []*corev1.Pod{ready("a"), notReady("b"), notReady("c")}, total: 3,
			want: policyv1alpha1.PodUnavailableBudgetStatus{ObservedGeneration: 3, TotalReplicas: 3, DesiredAvailable: 2, CurrentAvailable: 1, UnavailableAllowed: 0},
		},
		"a fresh disruptedPods record is kept, its pod not counted, and the status rechecked at its expiry": {
			pub:  pub(&one, nil, map[string]metav1.Time{"a": ago(5 * time.Second)}, nil),
			pods: []*corev1.Pod{ready("a"), ready("b"), ready("c")}, total: 3,
			want: policyv1alpha1.PodUnavailableBudgetStatus{ObservedGeneration: 3, TotalReplicas: 3, DesiredAvailable: 2, CurrentAvailable: 2, UnavailableAllowed: 0,
				DisruptedPods: map[string]metav1.Time{"a": ago(5 * time.Second)}},
			wantRecheck: now.Add(DeletionTimeout - 5*time.Second),
		},
		"a disruptedPods record older than DeletionTimeout is dropped and its pod counts again": {
			pub:  pub(&one, nil, map[string]metav1.Time{"a": ago(DeletionTimeout + time.Second)}, nil),
			pods: []*corev1.Pod{ready("a"), ready("b"), ready("c")}, total: 3,
			want: policyv1alpha1.PodUnavailableBudgetStatus{ObservedGeneration: 3, TotalReplicas: 3, DesiredAvailable: 2, CurrentAvailable: 3, UnavailableAllowed: 1},
		},
		"a disruptedPods record of a pod that is gone is dropped": {
			pub:  pub(&one, nil, map[string]metav1.Time{"gone": ago(time.Second)}, nil),
			pods: []*corev1.Pod{ready("b"), ready("c")}, total: 3,
			want: policyv1alpha1.PodUnavailableBudgetStatus{ObservedGeneration: 3, TotalReplicas: 3, DesiredAvailable: 2, CurrentAvailable: 2, UnavailableAllowed: 0},
		},
		"an unavailablePods record older than UpdateTimeout is dropped": {
			pub:  pub(&one, nil, nil, map[string]metav1.Time{"a": ago(UpdateTimeout + time.Second), "b": ago(time.Second)}),
			pods: []*corev1.Pod{ready("a"), ready("b"), ready("c")}, total: 3,
			want: policyv1alpha1.PodUnavailableBudgetStatus{ObservedGeneration: 3, TotalReplicas: 3, DesiredAvailable: 2, CurrentAvailable: 2, UnavailableAllowed: 0,
				UnavailablePods: map[string]metav1.Time{"b": ago(time.Second)}},
			wantRecheck: now.Add(UpdateTimeout - time.Second),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, recheck, err := computeStatus(tc.pub, tc.pods, tc.total, now)
			if err != nil {
				t.Fatal(err)
			}
			testkit.Diff(t, "status", tc.want, got)
			if !recheck.Equal(tc.wantRecheck) {
				t.Errorf("recheck = %v, want %v", recheck, tc.wantRecheck)
			}
		})
	}
}
