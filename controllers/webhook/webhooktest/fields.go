package webhooktest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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

// Fields lists the field of each error, in order: what a table that pins down only where the
// errors are compares.
func Fields(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

// Messages lists each error's full message, in order, nil for none: what a table that pins
// down the words a user reads compares.
func Messages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// TypedFields lists "type field" of each error, in order, e.g. "FieldValueRequired spec.image".
func TypedFields(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field)
	}
	return out
}

// AssertFields fails t unless errs are on wantFields, in order (nil and empty are the same).
func AssertFields(t testing.TB, errs field.ErrorList, wantFields []string) {
	t.Helper()
	if diff := cmp.Diff(wantFields, Fields(errs), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("error fields (-want +got):\n%s\nerrors: %v", diff, errs)
	}
}

// JSON is v as JSON, for a request's object; t fails when v does not marshal.
func JSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
