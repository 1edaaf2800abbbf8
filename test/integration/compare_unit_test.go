package integration

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSubsetDiff(t *testing.T) {
	cases := map[string]struct {
		want, got any
		wantDiffs []string
	}{
		"an identical object has no diff": {
			want: map[string]any{"a": 1, "b": []any{"x"}},
			got:  map[string]any{"a": int64(1), "b": []any{"x"}},
		},
		"fields the server added are ignored": {
			want: map[string]any{"a": 1},
			got:  map[string]any{"a": 1, "status": map[string]any{}},
		},
		"a pruned field is reported by path": {
			want:      map[string]any{"spec": map[string]any{"x": map[string]any{"y": "z"}}},
			got:       map[string]any{"spec": map[string]any{}},
			wantDiffs: []string{".spec.x: missing (pruned or renamed)"},
		},
		"a changed value inside a list is reported by index": {
			want:      map[string]any{"l": []any{map[string]any{"n": "a"}, map[string]any{"n": "b"}}},
			got:       map[string]any{"l": []any{map[string]any{"n": "a"}, map[string]any{"n": "c"}}},
			wantDiffs: []string{".l[1].n: want b, got c"},
		},
		"a shortened list is reported": {
			want:      map[string]any{"l": []any{"a", "b"}},
			got:       map[string]any{"l": []any{"a"}},
			wantDiffs: []string{".l: want 2 items, got [a]"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.wantDiffs, subsetDiff(tc.want, tc.got)); d != "" {
				t.Errorf("subsetDiff (-want +got):\n%s", d)
			}
		})
	}
}
