package testkit

import (
	"sort"
	"strings"
	"testing"
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
