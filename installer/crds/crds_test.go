package crds

import "testing"

func TestManaged(t *testing.T) {
	cases := map[string]struct {
		vals map[string]any
		want bool
	}{
		"values that say nothing leave the CRDs managed":   {vals: map[string]any{}, want: true},
		"crds.managed true keeps them managed":             {vals: map[string]any{"crds": map[string]any{"managed": true}}, want: true},
		"crds.managed false turns them off":                {vals: map[string]any{"crds": map[string]any{"managed": false}}, want: false},
		"a crds key that is not a map leaves them managed": {vals: map[string]any{"crds": "x"}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Managed(tc.vals); got != tc.want {
				t.Errorf("Managed(%v) = %v, want %v", tc.vals, got, tc.want)
			}
		})
	}
}
