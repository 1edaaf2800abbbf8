package allocate

import (
	"math"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// sub is a subset with optional replicas, min and max; "" leaves one unset.
func sub(name string, replicas, lo, hi string) appsv1alpha1.Subset {
	s := appsv1alpha1.Subset{Name: name}
	val := func(v string) *intstr.IntOrString {
		if v == "" {
			return nil
		}
		x := intstr.Parse(v)
		return &x
	}
	s.Replicas, s.MinReplicas, s.MaxReplicas = val(replicas), val(lo), val(hi)
	return s
}

// names makes subsets without replicas.
func names(ns ...string) []appsv1alpha1.Subset {
	var out []appsv1alpha1.Subset
	for _, n := range ns {
		out = append(out, sub(n, "", "", ""))
	}
	return out
}

// running says each named subset's workload has spec.replicas n.
func running(pairs map[string]int32) map[string]Current {
	out := map[string]Current{}
	for k, v := range pairs {
		out[k] = Current{SpecReplicas: v, Replicas: v}
	}
	return out
}

func TestReplicas(t *testing.T) {
	type tcase struct {
		in      Input
		want    map[string]int32
		wantErr bool
	}
	cases := map[string]tcase{
		"fixed: replicas split evenly, the remainder to the subsets that already run the most": {
			in:   Input{Replicas: ptr.To[int32](5), Subsets: names("t1", "t2", "t3", "t4"), Current: running(map[string]int32{"t1": 1, "t2": 4, "t3": 2, "t4": 2})},
			want: map[string]int32{"t1": 1, "t2": 2, "t3": 1, "t4": 1},
		},
		"fixed: scale to zero empties the only subset": {
			in:   Input{Replicas: ptr.To[int32](0), Subsets: names("t1"), Current: running(map[string]int32{"t1": 2})},
			want: map[string]int32{"t1": 0},
		},
		"fixed: scale up keeps the largest subset largest": {
			in:   Input{Replicas: ptr.To[int32](17), Subsets: names("t1", "t2", "t3", "t4"), Current: running(map[string]int32{"t1": 1, "t2": 4, "t3": 2, "t4": 2})},
			want: map[string]int32{"t1": 4, "t2": 5, "t3": 4, "t4": 4},
		},
		"fixed: equal subsets get the remainder by name, the later name first": {
			in:   Input{Replicas: ptr.To[int32](9), Subsets: names("t1", "t2", "t3", "t4"), Current: running(map[string]int32{"t1": 2, "t2": 4, "t3": 2, "t4": 2})},
			want: map[string]int32{"t1": 2, "t2": 3, "t3": 2, "t4": 2},
		},
		"fixed: an odd total over two subsets gives the extra one to the larger": {
			in:   Input{Replicas: ptr.To[int32](19), Subsets: names("t1", "t2"), Current: running(map[string]int32{"t1": 0, "t2": 10})},
			want: map[string]int32{"t1": 9, "t2": 10},
		},
		"fixed: subsets without a workload yet share the replicas evenly": {
			in:   Input{Replicas: ptr.To[int32](7), Subsets: names("a", "b", "c")},
			want: map[string]int32{"a": 2, "b": 2, "c": 3},
		},
		"fixed: subsets with replicas get them, the rest is split over the others": {
			in: Input{Replicas: ptr.To[int32](27), Subsets: []appsv1alpha1.Subset{sub("t1", "4", "", ""), sub("t2", "", "", ""), sub("t3", "4", "", ""), sub("t4", "", "", "")},
				Current: running(map[string]int32{"t1": 1, "t2": 4, "t3": 2, "t4": 2})},
			want: map[string]int32{"t1": 4, "t2": 10, "t3": 4, "t4": 9},
		},
		"fixed: subsets with replicas that take everything leave the others empty": {
			in: Input{Replicas: ptr.To[int32](8), Subsets: []appsv1alpha1.Subset{sub("t1", "4", "", ""), sub("t2", "", "", ""), sub("t3", "4", "", ""), sub("t4", "", "", "")},
				Current: running(map[string]int32{"t1": 2, "t2": 4, "t3": 2, "t4": 2})},
			want: map[string]int32{"t1": 4, "t2": 0, "t3": 4, "t4": 0},
		},
		"fixed: the one subset without replicas gets what is left": {
			in:   Input{Replicas: ptr.To[int32](10), Subsets: []appsv1alpha1.Subset{sub("t1", "1", "", ""), sub("t2", "2", "", ""), sub("t3", "3", "", ""), sub("t4", "", "", "")}},
			want: map[string]int32{"t1": 1, "t2": 2, "t3": 3, "t4": 4},
		},
		"fixed: without spec.replicas every subset's replicas are taken as they are": {
			in:   Input{Subsets: []appsv1alpha1.Subset{sub("t1", "1", "", ""), sub("t2", "2", "", ""), sub("t3", "3", "", ""), sub("t4", "4", "", "")}},
			want: map[string]int32{"t1": 1, "t2": 2, "t3": 3, "t4": 4},
		},
		"fixed: a percentage is of spec.replicas, rounded half up": {
			in:   Input{Replicas: ptr.To[int32](10), Subsets: []appsv1alpha1.Subset{sub("a", "25%", "", ""), sub("b", "", "", "")}},
			want: map[string]int32{"a": 3, "b": 7},
		},
		"fixed: subsets' replicas above spec.replicas are an error": {
			in:      Input{Replicas: ptr.To[int32](14), Subsets: []appsv1alpha1.Subset{sub("t1", "6", "", ""), sub("t2", "9", "", "")}},
			wantErr: true,
		},
		"fixed: subsets' replicas that add up past the largest int32 are an error, not a wrap-around": {
			in:      Input{Replicas: ptr.To[int32](math.MaxInt32), Subsets: []appsv1alpha1.Subset{sub("t1", "2147483647", "", ""), sub("t2", "2147483647", "", ""), sub("t3", "", "", "")}},
			wantErr: true,
		},
		"fixed: the largest int32 of replicas is split evenly": {
			in:   Input{Replicas: ptr.To[int32](math.MaxInt32), Subsets: names("a", "b")},
			want: map[string]int32{"a": math.MaxInt32 / 2, "b": math.MaxInt32/2 + 1},
		},
		"fixed: every subset set and short of spec.replicas is an error": {
			in:      Input{Replicas: ptr.To[int32](14), Subsets: []appsv1alpha1.Subset{sub("t1", "6", "", ""), sub("t2", "7", "", "")}},
			wantErr: true,
		},
		"fixed: without spec.replicas a subset without replicas is an error": {
			in:      Input{Subsets: []appsv1alpha1.Subset{sub("t1", "6", "", ""), sub("t2", "", "", "")}},
			wantErr: true,
		},
		"fixed: a percentage without spec.replicas is an error": {
			in:      Input{Subsets: []appsv1alpha1.Subset{sub("t1", "50%", "", "")}},
			wantErr: true,
		},
		"elastic: minimums that add up to the total are all it gets": {
			in: Input{Replicas: ptr.To[int32](10), Subsets: []appsv1alpha1.Subset{
				sub("s0", "", "2", "5"), sub("s1", "", "2", "5"), sub("s2", "", "2", "5"), sub("s3", "", "2", "5"), sub("s4", "", "2", "")}},
			want: map[string]int32{"s0": 2, "s1": 2, "s2": 2, "s3": 2, "s4": 2},
		},
		"elastic: above the minimums, maximums are filled in subset order": {
			in: Input{Replicas: ptr.To[int32](14), Subsets: []appsv1alpha1.Subset{
				sub("s0", "", "2", "5"), sub("s1", "", "2", "5"), sub("s2", "", "2", "5"), sub("s3", "", "2", "5"), sub("s4", "", "2", "")}},
			want: map[string]int32{"s0": 5, "s1": 3, "s2": 2, "s3": 2, "s4": 2},
		},
		"elastic: below the minimums, they are filled in subset order until the total": {
			in: Input{Replicas: ptr.To[int32](5), Subsets: []appsv1alpha1.Subset{
				sub("s0", "", "2", "5"), sub("s1", "", "2", "5"), sub("s2", "", "2", "5"), sub("s3", "", "2", "5"), sub("s4", "", "2", "")}},
			want: map[string]int32{"s0": 2, "s1": 2, "s2": 1, "s3": 0, "s4": 0},
		},
		"elastic: the subset without a maximum takes everything past the others' maximums": {
			in:   Input{Replicas: ptr.To[int32](10), Subsets: []appsv1alpha1.Subset{sub("a", "", "", "3"), sub("b", "", "", "3"), sub("c", "", "", "")}},
			want: map[string]int32{"a": 3, "b": 3, "c": 4},
		},
		"elastic: percentages of spec.replicas bound a subset": {
			in:   Input{Replicas: ptr.To[int32](10), Subsets: []appsv1alpha1.Subset{sub("a", "", "", "40%"), sub("b", "", "", "")}},
			want: map[string]int32{"a": 4, "b": 6},
		},
		"elastic: a minimum above the maximum is an error": {
			in:      Input{Replicas: ptr.To[int32](10), Subsets: []appsv1alpha1.Subset{sub("a", "", "4", "2"), sub("b", "", "", "")}},
			wantErr: true,
		},
	}
	// Adaptive: subset-1 [2,4] is unschedulable with pending pods out of its 4; subset-2 is open.
	adaptive := func(pending int32) Input {
		return Input{Replicas: ptr.To[int32](10), Adaptive: true,
			Subsets: []appsv1alpha1.Subset{sub("subset-1", "", "2", "4"), sub("subset-2", "", "", "")},
			Current: map[string]Current{"subset-1": {SpecReplicas: 2, Replicas: 4, Unschedulable: true, PendingPods: pending}}}
	}
	for name, c := range map[string]struct {
		pending int32
		a, b    int32
	}{
		"adaptive: an unschedulable subset with more pending pods than its maximum gives all its replicas to the next": {5, 0, 10},
		"adaptive: an unschedulable subset whose every pod is pending gives all its replicas to the next":              {4, 0, 10},
		"adaptive: an unschedulable subset keeps only the pods it runs, below its minimum":                             {3, 1, 9},
		"adaptive: an unschedulable subset running exactly its minimum keeps it":                                       {2, 2, 8},
		"adaptive: an unschedulable subset keeps the pods it runs and grows no further":                                {1, 3, 7},
		"adaptive: an unschedulable subset without timed-out pods keeps its maximum":                                   {0, 4, 6},
	} {
		cases[name] = struct {
			in      Input
			want    map[string]int32
			wantErr bool
		}{in: adaptive(c.pending), want: map[string]int32{"subset-1": c.a, "subset-2": c.b}}
	}
	// Adaptive: schedulable subsets keep the pods they run.
	keep := func(r1, r2 int32) Input {
		return Input{Replicas: ptr.To(r1 + r2), Adaptive: true,
			Subsets: []appsv1alpha1.Subset{sub("subset-1", "", "2", "4"), sub("subset-2", "", "", "")},
			Current: map[string]Current{"subset-1": {Replicas: r1}, "subset-2": {Replicas: r2}}}
	}
	for name, c := range map[string]struct {
		r1, r2 int32
		a, b   int32
	}{
		"adaptive: a subset below its minimum is filled first, even from the next subset's pods": {1, 1, 2, 0},
		"adaptive: a subset at its minimum keeps it and the next keeps the rest":                 {2, 1, 2, 1},
		"adaptive: a subset below its minimum takes from the next subset":                        {1, 2, 2, 1},
		"adaptive: an empty subset gets its minimum back":                                        {0, 4, 2, 2},
		"adaptive: a schedulable subset keeps its running pods above its minimum":                {3, 1, 3, 1},
	} {
		cases[name] = struct {
			in      Input
			want    map[string]int32
			wantErr bool
		}{in: keep(c.r1, c.r2), want: map[string]int32{"subset-1": c.a, "subset-2": c.b}}
	}

	testkit.Cases(t, cases, func(t *testing.T, c tcase) {
		got, err := Replicas(c.in)
		if (err != nil) != c.wantErr {
			t.Fatalf("err = %v, want error %v", err, c.wantErr)
		}
		testkit.Diff(t, "replicas", c.want, got)
	})
}

func TestParse(t *testing.T) {
	type tcase struct {
		total   int32
		v       intstr.IntOrString
		want    int32
		wantErr bool
	}
	cases := map[string]tcase{
		"a count is taken as it is":                    {10, intstr.FromInt32(3), 3, false},
		"a count needs no spec.replicas":               {Unset, intstr.FromInt32(3), 3, false},
		"a percentage rounds half up":                  {5, intstr.FromString("50%"), 3, false},
		"a negative count is refused":                  {10, intstr.FromInt32(-1), 0, true},
		"a percentage needs spec.replicas":             {Unset, intstr.FromString("50%"), 0, true},
		"a string without a percent sign is refused":   {10, intstr.FromString("5"), 0, true},
		"a percentage above 100 is refused":            {10, intstr.FromString("101%"), 0, true},
		"a percentage that is not a number is refused": {10, intstr.FromString("x%"), 0, true},
	}
	testkit.Cases(t, cases, func(t *testing.T, c tcase) {
		got, err := Parse(c.total, c.v)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("Parse = %d, %v; want %d, error %v", got, err, c.want, c.wantErr)
		}
	})
}
