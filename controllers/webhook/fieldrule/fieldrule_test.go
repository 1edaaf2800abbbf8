package fieldrule

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestEnum(t *testing.T) {
	p := field.NewPath("spec", "policy")
	tests := []struct {
		name string
		v    string
		want []string
	}{
		{name: "an allowed value passes", v: "Always", want: nil},
		{name: "another value is refused, listing the allowed ones", v: "Sometimes",
			want: []string{`spec.policy: Unsupported value: "Sometimes": supported values: "Always", "Never"`}},
		{name: "an empty value is refused", v: "",
			want: []string{`spec.policy: Unsupported value: "": supported values: "Always", "Never"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, messages(Enum(p, tt.v, "Always", "Never"))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnique(t *testing.T) {
	seen := sets.New("taken")
	tests := []struct {
		name, v string
		want    []string
	}{
		{name: "a new valid name passes", v: "fresh"},
		{name: "a name seen before is refused as a duplicate", v: "taken", want: []string{`spec.names[1]: Duplicate value: "taken"`}},
		{name: "an invalid name is refused with the validator's message", v: "Bad",
			want: []string{`spec.names[1]: Invalid value: "Bad": lower case only`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lower := func(s string) []string {
				if s != strings.ToLower(s) {
					return []string{"lower case only"}
				}
				return nil
			}
			got := messages(Unique(field.NewPath("spec", "names").Index(1), tt.v, seen, lower))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if !seen.Has(tt.v) {
				t.Errorf("%q was not added to seen", tt.v)
			}
		})
	}
}

func TestExactlyOne(t *testing.T) {
	a, b := field.NewPath("spec", "selector"), field.NewPath("spec", "targetRef")
	tests := []struct {
		name       string
		hasA, hasB bool
		wantOne    bool
		want       []string
	}{
		{name: "only the first is one", hasA: true, wantOne: true},
		{name: "only the second is one", hasB: true, wantOne: true},
		{name: "neither is refused on the first", want: []string{"spec.selector: Required value: one of spec.selector and spec.targetRef is required"}},
		{name: "both are refused on the second", hasA: true, hasB: true,
			want: []string{"spec.targetRef: Forbidden: spec.selector and spec.targetRef are mutually exclusive; set only one"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errs field.ErrorList
			one := ExactlyOne(&errs, a, tt.hasA, b, tt.hasB)
			if diff := cmp.Diff([]any{tt.wantOne, tt.want}, []any{one, messages(errs)}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func messages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestNonNegativeAndPositive(t *testing.T) {
	p := field.NewPath("spec", "ttlSecondsAfterFinished")
	tests := map[string]struct {
		got  field.ErrorList
		want []string
	}{
		"an unset count passes both": {got: append(NonNegative[int32](p, nil, "seconds"), Positive[int64](p, nil, "seconds")...)},
		"0 is not negative":          {got: NonNegative(p, of[int32](0), "seconds")},
		"a count below 0 is refused with its unit": {got: NonNegative(p, of[int64](-1), "seconds"),
			want: []string{`spec.ttlSecondsAfterFinished: Invalid value: -1: must be 0 or more seconds`}},
		"a count below 0 is refused without a unit when none is given": {got: NonNegative(p, of[int32](-2), ""),
			want: []string{`spec.ttlSecondsAfterFinished: Invalid value: -2: must be 0 or more`}},
		"1 is positive": {got: Positive(p, of[int64](1), "seconds")},
		"0 is not positive": {got: Positive(p, of[int64](0), "seconds"),
			want: []string{`spec.ttlSecondsAfterFinished: Invalid value: 0: must be a positive number of seconds`}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, messages(tt.got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// of points to v.
func of[T any](v T) *T { return &v }
