package podunavailablebudget

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/pubcheck"
)

const (
	// DeletionTimeout is how long a pod stays in disruptedPods: a deletion or eviction the
	// webhook allowed that has not taken the pod away by then is taken as not happening.
	DeletionTimeout = 20 * time.Second
	// UpdateTimeout is how long a pod stays in unavailablePods after its in-place update was
	// allowed; by then the pod's own status says whether it is available.
	UpdateTimeout = 10 * time.Second
)

// desiredAvailable is the fewest covered pods that must stay available out of total:
// total less maxUnavailable (rounded up from a percentage), or minAvailable (a percentage
// rounded up), never below zero.
func desiredAvailable(spec policyv1alpha1.PodUnavailableBudgetSpec, total int32) (int32, error) {
	switch {
	case spec.MaxUnavailable != nil:
		max, err := intstr.GetScaledValueFromIntOrPercent(spec.MaxUnavailable, int(total), true)
		if err != nil {
			return 0, err
		}
		return max32(total-int32(max), 0), nil
	case spec.MinAvailable != nil:
		min, err := intstr.GetScaledValueFromIntOrPercent(spec.MinAvailable, int(total), true)
		if err != nil {
			return 0, err
		}
		return max32(int32(min), 0), nil
	}
	return 0, nil
}

func max32(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}

// computeStatus is the budget's status for its active pods and desired total at now, and
// when it must be computed again for a record's expiry (zero: no record pending):
//   - a disruptedPods record is kept while its pod is still there and younger than
//     DeletionTimeout, an unavailablePods record while younger than UpdateTimeout;
//   - a pod counts as available when pubcheck.Available says so and it is not recorded;
//   - unavailableAllowed is currentAvailable less desiredAvailable, never below zero.
func computeStatus(pub *policyv1alpha1.PodUnavailableBudget, pods []*corev1.Pod, total int32, now time.Time) (policyv1alpha1.PodUnavailableBudgetStatus, time.Time, error) {
	desired, err := desiredAvailable(pub.Spec, total)
	if err != nil {
		return pub.Status, time.Time{}, err
	}
	disrupted := map[string]metav1.Time{}
	unavailable := map[string]metav1.Time{}
	var recheck time.Time
	keep := func(at metav1.Time, ttl time.Duration) bool {
		expiry := at.Add(ttl)
		if !expiry.After(now) {
			return false
		}
		if recheck.IsZero() || expiry.Before(recheck) {
			recheck = expiry
		}
		return true
	}
	var current int32
	for _, p := range pods {
		recorded := false
		if at, ok := pub.Status.DisruptedPods[p.Name]; ok && keep(at, DeletionTimeout) {
			disrupted[p.Name] = at
			recorded = true
		}
		if at, ok := pub.Status.UnavailablePods[p.Name]; ok && keep(at, UpdateTimeout) {
			unavailable[p.Name] = at
			recorded = true
		}
		if !recorded && pubcheck.Available(p) {
			current++
		}
	}
	if len(disrupted) == 0 {
		disrupted = nil
	}
	if len(unavailable) == 0 {
		unavailable = nil
	}
	return policyv1alpha1.PodUnavailableBudgetStatus{
		ObservedGeneration: pub.Generation,
		DisruptedPods:      disrupted,
		UnavailablePods:    unavailable,
		UnavailableAllowed: max32(current-desired, 0),
		CurrentAvailable:   current,
		DesiredAvailable:   desired,
		TotalReplicas:      total,
	}, recheck, nil
}
