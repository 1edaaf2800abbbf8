package inplaceupdate

import (
	"errors"
	"testing"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
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
			testkit.Diff(t, "decisions made, errors", []any{tc.wantCalls, tc.wantErrs}, []any{calls, errs})
		})
	}
}

func TestPolicyOf(t *testing.T) {
	// The policy each strategy type means, for a kind whose recreate type is ReCreate and whose
	// in-place-only type is InPlaceOnly: those two always recreate and never recreate; any other
	// type, and an unset one, updates in place when it can, as 1.8 does.
	want := map[string]Policy{
		"ReCreate":          PolicyRecreate,
		"InPlaceOnly":       PolicyInPlaceOnly,
		"InPlaceIfPossible": PolicyInPlaceIfPossible,
		"":                  PolicyInPlaceIfPossible,
	}
	got := map[string]Policy{}
	for typ := range want {
		got[typ] = PolicyOf(typ, "ReCreate", "InPlaceOnly")
	}
	testkit.Diff(t, "policy by strategy type", want, got)
}

func TestWithGrace(t *testing.T) {
	base := Options{EnvFromMetadata: true}
	got := []Options{base.WithGrace(nil), base.WithGrace(&appspub.InPlaceUpdateStrategy{GracePeriodSeconds: 10})}
	want := []Options{{EnvFromMetadata: true}, {EnvFromMetadata: true, GraceSeconds: 10}}
	testkit.Diff(t, "no strategy keeps no grace; a strategy's grace period is taken", want, got)
}
