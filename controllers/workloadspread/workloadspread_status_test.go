package workloadspread

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func running(name string) podEntry {
	return podEntry{key: name, pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}}
}

func unschedulablePod(name string, age time.Duration) podEntry {
	return podEntry{key: name, pod: &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: ago(age)},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}},
	}}
}

func twoSubsets(status ...appsv1alpha1.WorkloadSpreadSubsetStatus) *appsv1alpha1.WorkloadSpread {
	return &appsv1alpha1.WorkloadSpread{
		ObjectMeta: metav1.ObjectMeta{Name: "ws", Generation: 3},
		Spec: appsv1alpha1.WorkloadSpreadSpec{Subsets: []appsv1alpha1.WorkloadSpreadSubset{
			{Name: "a", MaxReplicas: ptr.To(intstr.FromInt32(3))}, {Name: "b"}}},
		Status: appsv1alpha1.WorkloadSpreadStatus{SubsetStatuses: status},
	}
}

func adaptive(ws *appsv1alpha1.WorkloadSpread, seconds int32) *appsv1alpha1.WorkloadSpread {
	ws.Spec.ScheduleStrategy = appsv1alpha1.WorkloadSpreadScheduleStrategy{Type: appsv1alpha1.AdaptiveWorkloadSpreadScheduleStrategyType,
		Adaptive: &appsv1alpha1.AdaptiveWorkloadSpreadStrategy{RescheduleCriticalSeconds: ptr.To(seconds)}}
	return ws
}

func TestComputeStatus(t *testing.T) {
	type tcase struct {
		ws             *appsv1alpha1.WorkloadSpread
		pods           map[string][]podEntry
		want           []appsv1alpha1.WorkloadSpreadSubsetStatus
		wantRequeue    time.Duration
		wantReschedule []string
	}
	cases := map[string]tcase{
		"running pods count as replicas and fill the subset": {
			ws:   twoSubsets(),
			pods: map[string][]podEntry{"a": {running("a1"), running("a2")}, "b": {running("b1")}},
			want: []appsv1alpha1.WorkloadSpreadSubsetStatus{{Name: "a", Replicas: 2, MissingReplicas: 1}, {Name: "b", Replicas: 1, MissingReplicas: -1}},
		},
		"a pod being created still counts until it shows up": {
			ws: twoSubsets(appsv1alpha1.WorkloadSpreadSubsetStatus{Name: "a", CreatingPods: map[string]metav1.Time{"a9": ago(10 * time.Second)}}),
			want: []appsv1alpha1.WorkloadSpreadSubsetStatus{
				{Name: "a", MissingReplicas: 2, CreatingPods: map[string]metav1.Time{"a9": ago(10 * time.Second)}},
				{Name: "b", MissingReplicas: -1}},
			wantRequeue: 20 * time.Second,
		},
		"a pod being created is dropped once it shows up": {
			ws:   twoSubsets(appsv1alpha1.WorkloadSpreadSubsetStatus{Name: "a", CreatingPods: map[string]metav1.Time{"a1": ago(time.Second)}}),
			pods: map[string][]podEntry{"a": {running("a1")}},
			want: []appsv1alpha1.WorkloadSpreadSubsetStatus{{Name: "a", Replicas: 1, MissingReplicas: 2}, {Name: "b", MissingReplicas: -1}},
		},
		"a pod being created that never showed up expires after 30s": {
			ws:   twoSubsets(appsv1alpha1.WorkloadSpreadSubsetStatus{Name: "a", CreatingPods: map[string]metav1.Time{"a9": ago(31 * time.Second)}}),
			want: []appsv1alpha1.WorkloadSpreadSubsetStatus{{Name: "a", MissingReplicas: 3}, {Name: "b", MissingReplicas: -1}},
		},
		"a pod being deleted frees its replica while it lingers": {
			ws:   twoSubsets(appsv1alpha1.WorkloadSpreadSubsetStatus{Name: "a", DeletingPods: map[string]metav1.Time{"a1": ago(5 * time.Second)}}),
			pods: map[string][]podEntry{"a": {running("a1"), running("a2"), running("a3")}},
			want: []appsv1alpha1.WorkloadSpreadSubsetStatus{
				{Name: "a", Replicas: 3, MissingReplicas: 1, DeletingPods: map[string]metav1.Time{"a1": ago(5 * time.Second)}},
				{Name: "b", MissingReplicas: -1}},
			wantRequeue: 10 * time.Second,
		},
		"a pod being deleted that did not go expires after 15s": {
			ws:   twoSubsets(appsv1alpha1.WorkloadSpreadSubsetStatus{Name: "a", DeletingPods: map[string]metav1.Time{"a1": ago(16 * time.Second)}}),
			pods: map[string][]podEntry{"a": {running("a1")}},
			want: []appsv1alpha1.WorkloadSpreadSubsetStatus{{Name: "a", Replicas: 1, MissingReplicas: 2}, {Name: "b", MissingReplicas: -1}},
		},
		"under Adaptive a pod unschedulable past the critical seconds makes its subset unschedulable and is rescheduled": {
			ws:   adaptive(twoSubsets(), 10),
			pods: map[string][]podEntry{"a": {unschedulablePod("a1", 11*time.Second)}},
			want: []appsv1alpha1.WorkloadSpreadSubsetStatus{
				{Name: "a", Replicas: 1, MissingReplicas: 2, Conditions: []appsv1alpha1.WorkloadSpreadSubsetCondition{{Type: "Schedulable", Status: "False", LastTransitionTime: metav1.NewTime(now)}}},
				{Name: "b", MissingReplicas: -1, Conditions: []appsv1alpha1.WorkloadSpreadSubsetCondition{{Type: "Schedulable", Status: "True", LastTransitionTime: metav1.NewTime(now)}}}},
			wantRequeue:    UnschedulableDuration,
			wantReschedule: []string{"a1"},
		},
		"under Adaptive a pod not yet past the critical seconds is waited for": {
			ws:   adaptive(twoSubsets(), 10),
			pods: map[string][]podEntry{"a": {unschedulablePod("a1", 4*time.Second)}},
			want: []appsv1alpha1.WorkloadSpreadSubsetStatus{
				{Name: "a", Replicas: 1, MissingReplicas: 2, Conditions: []appsv1alpha1.WorkloadSpreadSubsetCondition{{Type: "Schedulable", Status: "True", LastTransitionTime: metav1.NewTime(now)}}},
				{Name: "b", MissingReplicas: -1, Conditions: []appsv1alpha1.WorkloadSpreadSubsetCondition{{Type: "Schedulable", Status: "True", LastTransitionTime: metav1.NewTime(now)}}}},
			wantRequeue: 6 * time.Second,
		},
		"under Adaptive the last subset is never rescheduled": {
			ws:   adaptive(twoSubsets(), 10),
			pods: map[string][]podEntry{"b": {unschedulablePod("b1", time.Minute)}},
			want: []appsv1alpha1.WorkloadSpreadSubsetStatus{
				{Name: "a", MissingReplicas: 3, Conditions: []appsv1alpha1.WorkloadSpreadSubsetCondition{{Type: "Schedulable", Status: "True", LastTransitionTime: metav1.NewTime(now)}}},
				{Name: "b", Replicas: 1, MissingReplicas: -1, Conditions: []appsv1alpha1.WorkloadSpreadSubsetCondition{{Type: "Schedulable", Status: "True", LastTransitionTime: metav1.NewTime(now)}}}},
		},
		"an unschedulable subset is tried again five minutes after it turned": {
			ws: adaptive(twoSubsets(appsv1alpha1.WorkloadSpreadSubsetStatus{Name: "a",
				Conditions: []appsv1alpha1.WorkloadSpreadSubsetCondition{{Type: "Schedulable", Status: "False", LastTransitionTime: ago(301 * time.Second)}}}), 10),
			want: []appsv1alpha1.WorkloadSpreadSubsetStatus{
				{Name: "a", MissingReplicas: 3, Conditions: []appsv1alpha1.WorkloadSpreadSubsetCondition{{Type: "Schedulable", Status: "True", LastTransitionTime: metav1.NewTime(now)}}},
				{Name: "b", MissingReplicas: -1, Conditions: []appsv1alpha1.WorkloadSpreadSubsetCondition{{Type: "Schedulable", Status: "True", LastTransitionTime: metav1.NewTime(now)}}}},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		got, err := computeStatus(tc.ws, tc.pods, 10, now)
		if err != nil {
			t.Fatal(err)
		}
		testkit.Diff(t, "subset statuses", tc.want, got.status.SubsetStatuses)
		testkit.Diff(t, "observedGeneration", int64(3), got.status.ObservedGeneration)
		testkit.Diff(t, "requeueAfter", tc.wantRequeue, got.requeueAfter)
		var names []string
		for _, p := range got.reschedule {
			names = append(names, p.Name)
		}
		testkit.Diff(t, "rescheduled", tc.wantReschedule, names)
	})
}
