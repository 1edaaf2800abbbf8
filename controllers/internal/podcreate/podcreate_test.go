package podcreate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestBatches(t *testing.T) {
	tests := []struct {
		name     string
		n, limit int
		want     []int
	}{
		{name: "nothing to create makes no batch", n: 0, limit: 8, want: nil},
		{name: "batches double from one", n: 7, limit: 8, want: []int{1, 2, 4}},
		{name: "the last batch holds what is left", n: 10, limit: 8, want: []int{1, 2, 4, 3}},
		{name: "batches stop growing at the limit", n: 30, limit: 8, want: []int{1, 2, 4, 8, 8, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Batches(tt.n, tt.limit)); diff != "" {
				t.Errorf("Batches(%d, %d) (-want +got):\n%s", tt.n, tt.limit, diff)
			}
		})
	}
}

func TestStopReason(t *testing.T) {
	planned := &metav1.ObjectMeta{UID: "a", Generation: 2}
	deleting := metav1.Now()
	tests := []struct {
		name string
		now  metav1.Object
		want string
	}{
		{name: "the same workload at the same generation goes on", now: &metav1.ObjectMeta{UID: "a", Generation: 2}},
		{name: "a workload that is gone stops creation", now: nil, want: "the DaemonSet is gone"},
		{name: "a new workload of the same name stops creation", now: &metav1.ObjectMeta{UID: "b", Generation: 2}, want: "the DaemonSet is gone"},
		{name: "a workload being deleted stops creation", now: &metav1.ObjectMeta{UID: "a", Generation: 2, DeletionTimestamp: &deleting}, want: "the DaemonSet is being deleted"},
		{name: "a spec change stops creation", now: &metav1.ObjectMeta{UID: "a", Generation: 3}, want: "the DaemonSet's spec changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := StopReason("DaemonSet", planned, tt.now); got != tt.want {
				t.Errorf("StopReason = %q, want %q", got, tt.want)
			}
		})
	}
}
