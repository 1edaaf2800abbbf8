package podcreate

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Batches returns the sizes of the batches that create n pods: 1, 2, 4, ... doubling up to
// limit, so that a quota or admission failure costs one call and not hundreds.
func Batches(n, limit int) []int {
	var out []int
	for size := 1; n > 0; size = min(2*size, limit) {
		b := min(size, n)
		out = append(out, b)
		n -= b
	}
	return out
}

// StopReason says why pod creation planned from the workload planned must stop before its next
// batch, given the workload as the cache shows it now (nil when it is gone), or "" to go on. kind
// names the workload in the reason. Any spec change stops creation, since a new plan is needed.
func StopReason(kind string, planned, now metav1.Object) string {
	switch {
	case now == nil || now.GetUID() != planned.GetUID():
		return "the " + kind + " is gone"
	case now.GetDeletionTimestamp() != nil:
		return "the " + kind + " is being deleted"
	case now.GetGeneration() != planned.GetGeneration():
		return "the " + kind + "'s spec changed"
	}
	return ""
}
