package inplaceupdate

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRoutes(t *testing.T) {
	tests := map[string]struct {
		froms     []string
		failFirst bool
		wantCalls []string
		wantErrs  int
	}{
		"a revision is decided once however many pods are at it": {
			froms: []string{"r1", "r2", "r1", "r1"}, wantCalls: []string{"r1", "r2"},
		},
		"a decision that failed is tried again": {
			froms: []string{"r1", "r1"}, failFirst: true, wantCalls: []string{"r1", "r1"}, wantErrs: 1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var calls []string
			routes := Routes{Decide: func(from string) (Decision, error) {
				calls = append(calls, from)
				if tc.failFirst && len(calls) == 1 {
					return Decision{}, errors.New("cannot read revision")
				}
				return Decision{Route: RouteInPlace}, nil
			}}
			errs := 0
			for _, from := range tc.froms {
				if _, err := routes.For(from); err != nil {
					errs++
				}
			}
			if diff := cmp.Diff([]any{tc.wantCalls, tc.wantErrs}, []any{calls, errs}); diff != "" {
				t.Errorf("decisions made, errors (-want +got):\n%s", diff)
			}
		})
	}
}
