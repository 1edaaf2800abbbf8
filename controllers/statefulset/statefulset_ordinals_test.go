package statefulset

import (
	"testing"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestOrdinalOf(t *testing.T) {
	type tcase struct {
		pod    string
		want   int
		wantOK bool
	}
	tests := map[string]tcase{
		"<set>-<n> has ordinal n":                     {pod: "web-12", want: 12, wantOK: true},
		"another set's pod has none":                  {pod: "webapp-1", wantOK: false},
		"a suffix that is not a number has none":      {pod: "web-abc", wantOK: false},
		"a leading zero is not an ordinal's spelling": {pod: "web-01", wantOK: false},
		"a pod of set web-x has none in set web":      {pod: "web-x-3", wantOK: false},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		got, ok := ordinalOf("web", tt.pod)
		testkit.Diff(t, "ordinal, ok", []any{tt.want, tt.wantOK}, []any{got, ok})
	})
}
