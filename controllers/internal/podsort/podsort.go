package podsort

import (
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcondition"
)

// DeletionCostAnnotation is the annotation users set to say which pods to keep.
const DeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// ForDeletion sorts pods so that the first ones are the cheapest to delete.
func ForDeletion(pods []*corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool { return deleteBefore(pods[i], pods[j]) })
}

func deleteBefore(a, b *corev1.Pod) bool {
	// Unassigned before assigned.
	if (a.Spec.NodeName == "") != (b.Spec.NodeName == "") {
		return a.Spec.NodeName == ""
	}
	// Pending before unknown before running.
	if pa, pb := phaseRank(a.Status.Phase), phaseRank(b.Status.Phase); pa != pb {
		return pa < pb
	}
	// Not ready before ready.
	if ra, rb := IsReady(a), IsReady(b); ra != rb {
		return !ra
	}
	// Lower deletion cost before higher.
	if ca, cb := deletionCost(a), deletionCost(b); ca != cb {
		return ca < cb
	}
	// Ready for a shorter time before a longer time.
	if IsReady(a) && IsReady(b) {
		ta, tb := readySince(a), readySince(b)
		if !ta.Equal(tb) {
			return ta.After(tb)
		}
	}
	// More restarts before fewer.
	if ra, rb := restarts(a), restarts(b); ra != rb {
		return ra > rb
	}
	// Newer before older.
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.After(b.CreationTimestamp.Time)
	}
	return a.Name > b.Name
}

func phaseRank(p corev1.PodPhase) int {
	switch p {
	case corev1.PodPending, "":
		return 0
	case corev1.PodUnknown:
		return 1
	case corev1.PodRunning:
		return 2
	}
	return 3
}

// deletionCost reads the pod-deletion-cost annotation; a missing or malformed value is 0.
func deletionCost(p *corev1.Pod) int64 {
	v, ok := p.Annotations[DeletionCostAnnotation]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0
	}
	return n
}

func restarts(p *corev1.Pod) int32 {
	var max int32
	for _, c := range p.Status.ContainerStatuses {
		if c.RestartCount > max {
			max = c.RestartCount
		}
	}
	return max
}

func readySince(p *corev1.Pod) time.Time {
	if c := podcondition.Get(p, corev1.PodReady); c != nil {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

// IsReady reports whether the pod's Ready condition is True.
func IsReady(p *corev1.Pod) bool {
	c := podcondition.Get(p, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

// IsAvailable reports whether the pod has been ready for at least minReadySeconds at now.
func IsAvailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	c := podcondition.Get(p, corev1.PodReady)
	if c == nil || c.Status != corev1.ConditionTrue {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	return !c.LastTransitionTime.IsZero() && c.LastTransitionTime.Add(time.Duration(minReadySeconds)*time.Second).Before(now.Add(time.Nanosecond))
}

// AvailableIn returns how long until the ready pod becomes available, or 0.
func AvailableIn(p *corev1.Pod, minReadySeconds int32, now time.Time) time.Duration {
	c := podcondition.Get(p, corev1.PodReady)
	if minReadySeconds == 0 || c == nil || c.Status != corev1.ConditionTrue {
		return 0
	}
	left := c.LastTransitionTime.Add(time.Duration(minReadySeconds) * time.Second).Sub(now)
	if left < 0 {
		return 0
	}
	return left
}

// ForUpdate sorts pods so that the first ones are updated first: pods that are already
// unavailable (they cost no more availability), then by the update priority strategy (higher
// weight, or a higher value of an ordered key), then the scatter strategy spreads the pods
// matching each term evenly over the order, then pods that are unassigned or pending.
func ForUpdate(pods []*corev1.Pod, priority *appspub.UpdatePriorityStrategy, scatter []ScatterTerm, minReadySeconds int32, now time.Time) {
	weights := make(map[*corev1.Pod]int64, len(pods))
	for _, p := range pods {
		weights[p] = priorityOf(priority, p)
	}
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if aa, ba := IsAvailable(a, minReadySeconds, now), IsAvailable(b, minReadySeconds, now); aa != ba {
			return !aa
		}
		if weights[a] != weights[b] {
			return weights[a] > weights[b]
		}
		if (a.Spec.NodeName == "") != (b.Spec.NodeName == "") {
			return a.Spec.NodeName == ""
		}
		return a.CreationTimestamp.Before(&b.CreationTimestamp) || (a.CreationTimestamp.Equal(&b.CreationTimestamp) && a.Name < b.Name)
	})
	if len(scatter) > 0 {
		scatterPods(pods, scatter)
	}
}

func priorityOf(s *appspub.UpdatePriorityStrategy, p *corev1.Pod) int64 {
	if s == nil {
		return 0
	}
	if len(s.WeightPriority) > 0 {
		var w int64
		for _, term := range s.WeightPriority {
			sel, err := metav1.LabelSelectorAsSelector(&term.MatchSelector)
			if err == nil && sel.Matches(labels.Set(p.Labels)) {
				w += int64(term.Weight)
			}
		}
		return w
	}
	// Order priority: the first key a pod has decides, with its integer value; a pod matching an
	// earlier key always ranks above one matching only a later key.
	n := int64(len(s.OrderPriority))
	for i, term := range s.OrderPriority {
		v, ok := p.Labels[term.OrderedKey]
		if !ok {
			continue
		}
		num := trailingInt(v)
		return (n-int64(i))<<40 + num
	}
	return 0
}

// trailingInt reads the integer at the end of a label value ("v12" gives 12).
func trailingInt(v string) int64 {
	i := len(v)
	for i > 0 && v[i-1] >= '0' && v[i-1] <= '9' {
		i--
	}
	n, err := strconv.ParseInt(v[i:], 10, 40)
	if err != nil {
		return 0
	}
	return n
}

// ScatterTerm is a label key and value whose pods an update spreads evenly.
type ScatterTerm struct{ Key, Value string }

// scatterPods reorders pods so that the pods matching each scatter term are spaced evenly among
// the others, keeping the relative order within each group.
func scatterPods(pods []*corev1.Pod, terms []ScatterTerm) {
	for _, term := range terms {
		var match, rest []*corev1.Pod
		for _, p := range pods {
			if p.Labels[term.Key] == term.Value {
				match = append(match, p)
			} else {
				rest = append(rest, p)
			}
		}
		if len(match) == 0 || len(rest) == 0 {
			continue
		}
		out := make([]*corev1.Pod, 0, len(pods))
		// Place match[k] at position round((k+0.5) * len/len(match)).
		total := len(pods)
		mi, ri := 0, 0
		for pos := 0; pos < total; pos++ {
			want := mi < len(match) && pos >= (2*mi+1)*total/(2*len(match))
			if (want || ri >= len(rest)) && mi < len(match) {
				out = append(out, match[mi])
				mi++
			} else {
				out = append(out, rest[ri])
				ri++
			}
		}
		copy(pods, out)
	}
}
