package ordinals

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// reserve parses a reserveOrdinals list that must be valid.
func reserve(t *testing.T, list ...intstr.IntOrString) Reserved {
	t.Helper()
	r, errs := ParseReserved(list, field.NewPath("spec", "reserveOrdinals"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return r
}

func none(int) bool { return false }

func TestSet(t *testing.T) {
	type tcase struct {
		start, replicas int
		reserve         []intstr.IntOrString
		// first is how many of the lowest ordinals to list.
		first     int
		wantLen   int
		wantFirst []int
	}
	tests := map[string]tcase{
		"pods take ordinals 0 to replicas-1":                      {replicas: 3, first: 3, wantLen: 3, wantFirst: []int{0, 1, 2}},
		"ordinals.start shifts the first ordinal":                 {start: 5, replicas: 3, first: 3, wantLen: 3, wantFirst: []int{5, 6, 7}},
		"reserved ordinals are skipped and replicas still run":    {replicas: 3, reserve: []intstr.IntOrString{intstr.FromInt32(1)}, first: 3, wantLen: 3, wantFirst: []int{0, 2, 3}},
		"a range \"a-b\" reserves every ordinal in it":            {replicas: 3, reserve: []intstr.IntOrString{intstr.FromInt32(0), intstr.FromString("2-5")}, first: 3, wantLen: 3, wantFirst: []int{1, 6, 7}},
		"a string ordinal reserves like an int":                   {replicas: 2, reserve: []intstr.IntOrString{intstr.FromString("0")}, first: 2, wantLen: 2, wantFirst: []int{1, 2}},
		"overlapping ranges merge":                                {replicas: 2, reserve: []intstr.IntOrString{intstr.FromString("1-3"), intstr.FromString("2-4")}, first: 2, wantLen: 2, wantFirst: []int{0, 5}},
		"a huge range costs nothing and is skipped in one step":   {replicas: 2, reserve: []intstr.IntOrString{intstr.FromString("0-2000000000")}, first: 2, wantLen: 2, wantFirst: []int{2000000001, 2000000002}},
		"reserved ordinals below start do not matter":             {start: 3, replicas: 2, reserve: []intstr.IntOrString{intstr.FromInt32(1)}, first: 2, wantLen: 2, wantFirst: []int{3, 4}},
		"a range across start reserves only its part from start":  {start: 3, replicas: 2, reserve: []intstr.IntOrString{intstr.FromString("1-4")}, first: 2, wantLen: 2, wantFirst: []int{5, 6}},
		"zero replicas take no ordinal":                           {replicas: 0, first: 3, wantLen: 0, wantFirst: []int(nil)},
		"ordinals stop at the largest int32 rather than overflow": {start: Max, replicas: 3, first: 3, wantLen: 1, wantFirst: []int{Max}},
		"the largest int32 of replicas is a count, not a list":    {replicas: Max, first: 3, wantLen: Max, wantFirst: []int{0, 1, 2}},
		"reserved ordinals shorten a set that reaches the top":    {replicas: Max, reserve: []intstr.IntOrString{intstr.FromString("1-10")}, first: 3, wantLen: Max - 9, wantFirst: []int{0, 11, 12}},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		s := New(tt.start, tt.replicas, reserve(t, tt.reserve...))
		got := struct {
			Len   int
			First []int
		}{s.Len(), s.First(tt.first, none)}
		want := struct {
			Len   int
			First []int
		}{tt.wantLen, tt.wantFirst}
		testkit.Diff(t, "set", want, got)
	})
}

func TestIndex(t *testing.T) {
	type tcase struct {
		start, replicas int
		reserve         []intstr.IntOrString
		o               int
		want            int
		wantOK          bool
	}
	tests := map[string]tcase{
		"the lowest ordinal is at place 0":                     {replicas: 3, o: 0, want: 0, wantOK: true},
		"an ordinal past the replicas is not in the set":       {replicas: 3, o: 3},
		"an ordinal below start is not in the set":             {start: 5, replicas: 3, o: 4},
		"start counts from place 0":                            {start: 5, replicas: 3, o: 7, want: 2, wantOK: true},
		"a reserved ordinal is not in the set":                 {replicas: 3, reserve: []intstr.IntOrString{intstr.FromInt32(1)}, o: 1},
		"reserved ordinals before o do not count to its place": {replicas: 3, reserve: []intstr.IntOrString{intstr.FromString("0-1")}, o: 4, want: 2, wantOK: true},
		"the highest ordinal of a set pushed up by a range is in it": {
			replicas: 2, reserve: []intstr.IntOrString{intstr.FromString("1-1000000")}, o: 1000001, want: 1, wantOK: true},
		"the ordinal after the highest is not": {replicas: 2, reserve: []intstr.IntOrString{intstr.FromString("1-1000000")}, o: 1000002},
		"an ordinal of a huge set is found by arithmetic": {
			replicas: Max, reserve: []intstr.IntOrString{intstr.FromString("10-19"), intstr.FromInt32(100)}, o: 2_000_000_000, want: 2_000_000_000 - 11, wantOK: true},
		"the zero set holds nothing": {o: 0},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		s := New(tt.start, tt.replicas, reserve(t, tt.reserve...))
		got, ok := s.Index(tt.o)
		testkit.Diff(t, "index, ok", []any{tt.want, tt.wantOK}, []any{got, ok})
		if ok != s.Has(tt.o) {
			t.Errorf("Has(%d) = %v, Index says %v", tt.o, s.Has(tt.o), ok)
		}
	})
}

func TestFirstSkipsTakenOrdinals(t *testing.T) {
	type tcase struct {
		replicas int
		reserve  []intstr.IntOrString
		taken    []int
		n        int
		want     []int
	}
	tests := map[string]tcase{
		"the lowest ordinals without a pod come first":      {replicas: 5, taken: []int{0, 2}, n: 2, want: []int{1, 3}},
		"fewer than n are left when the set is nearly full": {replicas: 3, taken: []int{0, 2}, n: 5, want: []int{1}},
		"a huge set lists only the n asked for, past the pods that exist": {
			replicas: Max, taken: []int{0, 1, 2, 3}, n: 3, want: []int{4, 5, 6}},
		"taken and reserved ordinals are both skipped": {
			replicas: 10, reserve: []intstr.IntOrString{intstr.FromString("1-2")}, taken: []int{0, 3}, n: 2, want: []int{4, 5}},
		"nothing is asked, nothing is listed": {replicas: 3, n: 0, want: []int(nil)},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		taken := map[int]bool{}
		for _, o := range tt.taken {
			taken[o] = true
		}
		s := New(0, tt.replicas, reserve(t, tt.reserve...))
		testkit.Diff(t, "first", tt.want, s.First(tt.n, func(o int) bool { return taken[o] }))
	})
}

func TestParseReservedNamesEachBadEntry(t *testing.T) {
	list := []intstr.IntOrString{intstr.FromInt32(-1), intstr.FromString("5-3"), intstr.FromString("a"), intstr.FromString("1-"), intstr.FromString("2-4"), intstr.FromString("0-3000000000")}
	r, errs := ParseReserved(list, field.NewPath("spec", "reserveOrdinals"))
	var got []string
	for _, e := range errs {
		got = append(got, e.Field)
	}
	want := []string{"spec.reserveOrdinals[0]", "spec.reserveOrdinals[1]", "spec.reserveOrdinals[2]", "spec.reserveOrdinals[3]", "spec.reserveOrdinals[5]"}
	testkit.Diff(t, "fields in error", want, got)
	testkit.Diff(t, "the good entries are still parsed", Reserved{{2, 4}}, r, cmp.AllowUnexported(span{}))
}
