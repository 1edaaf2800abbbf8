package webhooktest

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Case is one row of a validation table keyed by a sentence of behaviour: Change turns a valid
// object into the row's (nil leaves it valid), and WantField is the field of the one error that
// must follow, "" for none; that error's message holds WantMsg.
type Case[T any] struct {
	Name               string
	Change             func(T)
	WantField, WantMsg string
}

// RunCases runs every case as a subtest on a fresh object from valid, judged by validate.
func RunCases[T any](t *testing.T, cases []Case[T], valid func() T, validate func(T) field.ErrorList) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			obj := valid()
			if c.Change != nil {
				c.Change(obj)
			}
			AssertOneError(t, validate(obj), c.WantField, c.WantMsg)
		})
	}
}

// AssertOneError fails t unless errs is empty when wantField is, or is one error on wantField
// whose message holds wantMsg.
func AssertOneError(t testing.TB, errs field.ErrorList, wantField, wantMsg string) {
	t.Helper()
	if wantField == "" {
		if len(errs) > 0 {
			t.Fatalf("want no error, got %v", errs.ToAggregate())
		}
		return
	}
	if len(errs) != 1 || errs[0].Field != wantField {
		t.Fatalf("want one error on %s, got %v", wantField, errs.ToAggregate())
	}
	if !strings.Contains(errs[0].Error(), wantMsg) {
		t.Fatalf("want %q in the error on %s, got %v", wantMsg, wantField, errs[0])
	}
}
