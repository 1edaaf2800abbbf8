package testkit

import (
	"sort"
	"testing"
)

// recorder is a testing.TB that records the failures reported to it.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, format)
}

func TestCases(t *testing.T) {
	var ran []string
	Cases(t, map[string]int{"the first case runs": 1, "the second case runs": 2}, func(t *testing.T, c int) {
		ran = append(ran, t.Name())
	})
	sort.Strings(ran)
	Diff(t, "subtests", []string{"TestCases/the_first_case_runs", "TestCases/the_second_case_runs"}, ran)
}

func TestDiff(t *testing.T) {
	type diffCase struct {
		want, got  any
		wantFailed bool
	}
	Cases(t, map[string]diffCase{
		"equal values report nothing":    {want: []int{1}, got: []int{1}},
		"different values fail the test": {want: []int{1}, got: []int{2}, wantFailed: true},
	}, func(t *testing.T, c diffCase) {
		r := &recorder{TB: t}
		Diff(r, "values", c.want, c.got)
		if failed := len(r.errors) > 0; failed != c.wantFailed {
			t.Errorf("failed = %v, want %v", failed, c.wantFailed)
		}
	})
}
