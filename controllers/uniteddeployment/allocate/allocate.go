package allocate

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// Unset stands for an absent spec.replicas where Parse takes a total.
const Unset int32 = -1

// Current is what one existing subset workload holds now.
type Current struct {
	// SpecReplicas is the workload's spec.replicas.
	SpecReplicas int32
	// Replicas is the workload's status.replicas: the pods it has.
	Replicas int32
	// Unschedulable says the subset is marked unschedulable (Adaptive only).
	Unschedulable bool
	// PendingPods counts its pods that stayed unschedulable past rescheduleCriticalSeconds.
	PendingPods int32
}

// Input is everything an allocation reads.
type Input struct {
	// Replicas is spec.replicas; nil when unset.
	Replicas *int32
	Subsets  []appsv1alpha1.Subset
	Adaptive bool
	// Current holds the existing subset workloads by subset name; a subset without an entry has
	// no workload yet and counts as schedulable.
	Current map[string]Current
}

// Replicas returns the replicas of every subset of in.Subsets, by name, or an error saying why
// the spec cannot be allocated.
func Replicas(in Input) (map[string]int32, error) {
	for _, s := range in.Subsets {
		if s.MinReplicas != nil || s.MaxReplicas != nil {
			return elastic(in)
		}
	}
	return fixed(in)
}

// Parse turns a subset's replicas, minReplicas or maxReplicas into a count: an int as it is, a
// percentage "N%" (0 to 100) of total, rounded half up. total is Unset when spec.replicas is.
func Parse(total int32, v intstr.IntOrString) (int32, error) {
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return 0, fmt.Errorf("%d is negative: want a count of 0 or more, or a percentage such as \"50%%\"", v.IntVal)
		}
		return v.IntVal, nil
	}
	if total < 0 {
		return 0, fmt.Errorf("%q is a percentage of spec.replicas, which is unset: set spec.replicas or give a count", v.StrVal)
	}
	digits, ok := strings.CutSuffix(v.StrVal, "%")
	if !ok {
		return 0, fmt.Errorf("%q is neither a count nor a percentage: want an integer or a value such as \"50%%\"", v.StrVal)
	}
	pct, err := strconv.ParseInt(digits, 10, 32)
	if err != nil || pct < 0 || pct > 100 {
		return 0, fmt.Errorf("%q is not a percentage from 0%% to 100%%", v.StrVal)
	}
	return int32(math.Floor(float64(total)*float64(pct)/100 + 0.5)), nil
}

// fixed applies each subset's replicas and splits what is left evenly over the others.
func fixed(in Input) (map[string]int32, error) {
	total := Unset
	if in.Replicas != nil {
		total = *in.Replicas
	}
	specified := map[string]int32{}
	// The sum is an int64: subsets of 2147483647 replicas each must not wrap below the total.
	var sum int64
	for i, s := range in.Subsets {
		if s.Replicas == nil {
			continue
		}
		n, err := Parse(total, *s.Replicas)
		if err != nil {
			return nil, fmt.Errorf("spec.topology.subsets[%d].replicas: %w", i, err)
		}
		specified[s.Name] = n
		sum += int64(n)
	}
	switch {
	case total == Unset && len(specified) != len(in.Subsets):
		return nil, fmt.Errorf("spec.replicas is unset, so every subset must set replicas")
	case total != Unset && sum > int64(total):
		return nil, fmt.Errorf("the subsets' replicas add up to %d, more than spec.replicas %d", sum, total)
	case total != Unset && sum < int64(total) && len(specified) == len(in.Subsets):
		return nil, fmt.Errorf("every subset sets replicas and they add up to %d, less than spec.replicas %d", sum, total)
	}

	out := make(map[string]int32, len(in.Subsets))
	var rest []string
	for _, s := range in.Subsets {
		if n, ok := specified[s.Name]; ok {
			out[s.Name] = n
		} else {
			rest = append(rest, s.Name)
		}
	}
	if len(rest) == 0 {
		return out, nil
	}
	// The remainder goes to the subsets that run the most already, so a scale moves as few
	// pods as it can; ties go to the later name.
	sort.Slice(rest, func(i, j int) bool {
		a, b := in.Current[rest[i]].SpecReplicas, in.Current[rest[j]].SpecReplicas
		if a != b {
			return a < b
		}
		return rest[i] < rest[j]
	})
	left := total - int32(sum)
	each, extra := left/int32(len(rest)), left%int32(len(rest))
	for i := len(rest) - 1; i >= 0; i-- {
		out[rest[i]] = each
		if extra > 0 {
			out[rest[i]]++
			extra--
		}
	}
	return out, nil
}

// elastic fills every minimum, then every maximum, in subset order.
func elastic(in Input) (map[string]int32, error) {
	total := int32(1)
	if in.Replicas != nil {
		total = *in.Replicas
	}
	lo := make([]int32, len(in.Subsets))
	hi := make([]int32, len(in.Subsets))
	for i, s := range in.Subsets {
		lo[i], hi[i] = 0, math.MaxInt32
		if s.MinReplicas != nil {
			lo[i], _ = Parse(total, *s.MinReplicas)
		}
		if s.MaxReplicas != nil {
			hi[i], _ = Parse(total, *s.MaxReplicas)
		}
		if in.Adaptive {
			cur, exists := in.Current[s.Name]
			running := cur.Replicas - cur.PendingPods
			if exists && cur.Unschedulable {
				// An unschedulable subset may shrink but not grow.
				lo[i], hi[i] = min(running, lo[i]), min(running, hi[i])
			}
			if !cur.Unschedulable && running > lo[i] {
				// A schedulable subset keeps the pods it runs, so they are not deleted only to
				// be created again in an earlier subset.
				lo[i] = min(running, hi[i])
			}
		}
		if lo[i] > hi[i] {
			return nil, fmt.Errorf("spec.topology.subsets[%d]: maxReplicas %d is less than minReplicas %d", i, hi[i], lo[i])
		}
	}
	out := make(map[string]int32, len(in.Subsets))
	var given int32
	for i, s := range in.Subsets {
		n := max(min(lo[i], total-given), 0)
		out[s.Name] = n
		given += n
	}
	for i, s := range in.Subsets {
		if given >= total {
			break
		}
		n := max(min(hi[i]-lo[i], total-given), 0)
		out[s.Name] += n
		given += n
	}
	return out, nil
}
