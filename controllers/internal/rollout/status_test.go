package rollout

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type condType string

type cond struct {
	Type    condType
	Message string
	Fresh   bool
}

func TestFailures(t *testing.T) {
	types := []condType{"FailedScale", "FailedUpdate"}
	tests := map[string]struct {
		old    []cond
		failed map[condType]string
		want   []cond
	}{
		"a new failure is added, after the conditions that are not failures": {
			old:    []cond{{Type: "Other", Message: "kept"}},
			failed: map[condType]string{"FailedUpdate": "stuck"},
			want:   []cond{{Type: "Other", Message: "kept"}, {Type: "FailedUpdate", Message: "stuck", Fresh: true}},
		},
		"a failure that goes on keeps its condition and takes the new message": {
			old:    []cond{{Type: "FailedScale", Message: "old"}},
			failed: map[condType]string{"FailedScale": "new"},
			want:   []cond{{Type: "FailedScale", Message: "new"}},
		},
		"a failure that is over is dropped": {
			old:  []cond{{Type: "FailedScale", Message: "old"}, {Type: "Other"}},
			want: []cond{{Type: "Other"}},
		},
		"new failures come in the order of the types": {
			failed: map[condType]string{"FailedUpdate": "u", "FailedScale": "s"},
			want:   []cond{{Type: "FailedScale", Message: "s", Fresh: true}, {Type: "FailedUpdate", Message: "u", Fresh: true}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Failures(tc.old, types, tc.failed,
				func(c *cond) (*condType, *string) { return &c.Type, &c.Message },
				func(t condType, msg string) cond { return cond{Type: t, Message: msg, Fresh: true} })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCounts(t *testing.T) {
	var got Counts
	got.Add(true, true, true)
	got.Add(true, false, true)
	got.Add(false, false, false)
	want := Counts{Replicas: 3, Ready: 2, Available: 1, Updated: 2, UpdatedReady: 2, UpdatedAvailable: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a pod counts in every count whose conditions it meets (-want +got):\n%s", diff)
	}
}

func TestStuck(t *testing.T) {
	pods := []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, {ObjectMeta: metav1.ObjectMeta{Name: "b"}}}
	tests := map[string]struct {
		pods []*corev1.Pod
		want string
	}{
		"no stuck pod is no message": {},
		"the stuck pods are named with the revision and why": {
			pods: pods, want: "pods a, b cannot be updated in place to revision r2, and the strategy is InPlaceOnly",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Stuck(tc.pods, "r2", "the strategy is InPlaceOnly")); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConditions(t *testing.T) {
	types := []condType{"FailedScale", "FailedUpdate"}
	tests := map[string]struct {
		stuck   string
		syncErr error
		want    []cond
	}{
		"a stuck update sets the stuck type": {
			stuck: "stuck", want: []cond{{Type: "FailedUpdate", Message: "stuck", Fresh: true}},
		},
		"a sync failure of the stuck type says why over the stuck message": {
			stuck: "stuck", syncErr: fmt.Errorf("sync: %w", Failure[condType]{Type: "FailedUpdate", Err: errors.New("quota")}),
			want: []cond{{Type: "FailedUpdate", Message: "quota", Fresh: true}},
		},
		"a sync failure of another type sets that type too": {
			stuck: "stuck", syncErr: Failure[condType]{Type: "FailedScale", Err: errors.New("quota")},
			want: []cond{{Type: "FailedScale", Message: "quota", Fresh: true}, {Type: "FailedUpdate", Message: "stuck", Fresh: true}},
		},
		"an error that is no Failure sets nothing": {syncErr: errors.New("conflict")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := Conditions(nil, types, "FailedUpdate", tc.stuck, tc.syncErr,
				func(c *cond) (*condType, *string) { return &c.Type, &c.Message },
				func(t condType, msg string) cond { return cond{Type: t, Message: msg, Fresh: true} })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}
