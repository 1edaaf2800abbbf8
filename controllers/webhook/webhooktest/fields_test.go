package webhooktest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestFieldLists(t *testing.T) {
	errs := field.ErrorList{
		field.Required(field.NewPath("spec", "image"), "set it"),
		field.Duplicate(field.NewPath("spec", "names").Index(1), "a"),
	}
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{name: "Fields lists each error's field in order", got: Fields(errs), want: []string{"spec.image", "spec.names[1]"}},
		{name: "TypedFields lists each error's type and field in order", got: TypedFields(errs),
			want: []string{"FieldValueRequired spec.image", "FieldValueDuplicate spec.names[1]"}},
		{name: "Messages lists each error's full message in order", got: Messages(errs),
			want: []string{"spec.image: Required value: set it", `spec.names[1]: Duplicate value: "a"`}},
		{name: "no errors list nothing", got: Fields(nil), want: nil},
		{name: "no errors give no messages", got: Messages(nil), want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssertFields(t *testing.T) {
	errs := field.ErrorList{field.Required(field.NewPath("spec", "image"), "set it")}
	tests := []struct {
		name       string
		errs       field.ErrorList
		wantFields []string
		wantFail   bool
	}{
		{name: "the same fields pass", errs: errs, wantFields: []string{"spec.image"}},
		{name: "no errors pass an empty want", wantFields: []string{}},
		{name: "another field fails", errs: errs, wantFields: []string{"spec.replicas"}, wantFail: true},
		{name: "a missing error fails", wantFields: []string{"spec.image"}, wantFail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			AssertFields(rec, tt.errs, tt.wantFields)
			if diff := cmp.Diff(tt.wantFail, rec.failed); diff != "" {
				t.Errorf("failed (-want +got):\n%s", diff)
			}
		})
	}
}

// recorder is a testing.TB that records a failure instead of failing the test.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }

func TestJSONIsTheObjectsJSON(t *testing.T) {
	if diff := cmp.Diff(`{"kind":"Pod"}`, string(JSON(t, map[string]string{"kind": "Pod"}))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
