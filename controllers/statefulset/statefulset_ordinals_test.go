package statefulset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestDesiredOrdinals(t *testing.T) {
	tests := map[string]struct {
		start, replicas int
		reserve         []intstr.IntOrString
		want            []int
	}{
		"pods take ordinals 0 to replicas-1":                      {replicas: 3, want: []int{0, 1, 2}},
		"ordinals.start shifts the first ordinal":                 {start: 5, replicas: 3, want: []int{5, 6, 7}},
		"reserved ordinals are skipped and replicas still run":    {replicas: 3, reserve: []intstr.IntOrString{intstr.FromInt32(1)}, want: []int{0, 2, 3}},
		"a range \"a-b\" reserves every ordinal in it":            {replicas: 3, reserve: []intstr.IntOrString{intstr.FromInt32(0), intstr.FromString("2-5")}, want: []int{1, 6, 7}},
		"a string ordinal reserves like an int":                   {replicas: 2, reserve: []intstr.IntOrString{intstr.FromString("0")}, want: []int{1, 2}},
		"overlapping ranges merge":                                {replicas: 2, reserve: []intstr.IntOrString{intstr.FromString("1-3"), intstr.FromString("2-4")}, want: []int{0, 5}},
		"a huge range costs nothing and is skipped in one step":   {replicas: 2, reserve: []intstr.IntOrString{intstr.FromString("0-2000000000")}, want: []int{2000000001, 2000000002}},
		"reserved ordinals below start do not matter":             {start: 3, replicas: 2, reserve: []intstr.IntOrString{intstr.FromInt32(1)}, want: []int{3, 4}},
		"zero replicas take no ordinal":                           {replicas: 0, want: []int{}},
		"ordinals stop at the largest int32 rather than overflow": {start: maxOrdinal, replicas: 3, want: []int{maxOrdinal}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r, errs := ParseReserveOrdinals(tt.reserve, field.NewPath("spec", "reserveOrdinals"))
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if diff := cmp.Diff(tt.want, desiredOrdinals(tt.start, tt.replicas, r)); diff != "" {
				t.Errorf("ordinals (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseReserveOrdinalsNamesEachBadEntry(t *testing.T) {
	list := []intstr.IntOrString{intstr.FromInt32(-1), intstr.FromString("5-3"), intstr.FromString("a"), intstr.FromString("1-"), intstr.FromString("2-4")}
	_, errs := ParseReserveOrdinals(list, field.NewPath("spec", "reserveOrdinals"))
	var got []string
	for _, e := range errs {
		got = append(got, e.Field)
	}
	want := []string{"spec.reserveOrdinals[0]", "spec.reserveOrdinals[1]", "spec.reserveOrdinals[2]", "spec.reserveOrdinals[3]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields in error (-want +got):\n%s", diff)
	}
}

func TestOrdinalOf(t *testing.T) {
	tests := map[string]struct {
		pod    string
		want   int
		wantOK bool
	}{
		"<set>-<n> has ordinal n":                     {pod: "web-12", want: 12, wantOK: true},
		"another set's pod has none":                  {pod: "webapp-1", wantOK: false},
		"a suffix that is not a number has none":      {pod: "web-abc", wantOK: false},
		"a leading zero is not an ordinal's spelling": {pod: "web-01", wantOK: false},
		"a pod of set web-x has none in set web":      {pod: "web-x-3", wantOK: false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := ordinalOf("web", tt.pod)
			if diff := cmp.Diff([]any{tt.want, tt.wantOK}, []any{got, ok}); diff != "" {
				t.Errorf("ordinal, ok (-want +got):\n%s", diff)
			}
		})
	}
}
