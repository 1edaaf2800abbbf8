package testkit

import (
	"context"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestCases(t *testing.T) {
	var ran []string
	Cases(t, map[string]int{"the first case runs": 1, "the second case runs": 2}, func(t *testing.T, c int) {
		ran = append(ran, t.Name())
	})
	sort.Strings(ran)
	Diff(t, "subtests", []string{"TestCases/the_first_case_runs", "TestCases/the_second_case_runs"}, ran)
}

func TestDiffMessage(t *testing.T) {
	type tcase struct {
		want, got  any
		wantPrefix string
	}
	Cases(t, map[string]tcase{
		"equal values report nothing":                           {want: []int{1}, got: []int{1}},
		"different values are reported under what was compared": {want: 1, got: 2, wantPrefix: "values (-want +got):\n"},
	}, func(t *testing.T, c tcase) {
		got := DiffMessage("values", c.want, c.got)
		if (got == "") != (c.wantPrefix == "") || !strings.HasPrefix(got, c.wantPrefix) {
			t.Errorf("DiffMessage = %q, want it to start with %q", got, c.wantPrefix)
		}
	})
}

func TestCountStatusPatches(t *testing.T) {
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	n := 0
	c := CountStatusPatches(fake.NewClientBuilder().WithObjects(pod).WithStatusSubresource(pod).Build(), &n)
	patch := client.MergeFrom(pod.DeepCopy())
	pod.Status.Phase = corev1.PodRunning
	if err := c.Status().Patch(ctx, pod, patch); err != nil {
		t.Fatal(err)
	}
	pod.Labels = map[string]string{"a": "b"}
	if err := c.Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	Diff(t, "status patches counted (a status patch, then an update that is not one)", 1, n)
}
