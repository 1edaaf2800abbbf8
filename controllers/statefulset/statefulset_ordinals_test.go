package statefulset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
