package installer

import (
	"errors"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/kruise-addon/kruise-addon/versions"
)

func TestUpgradePathTakesOverACommunityReleaseByTheCommunityRules(t *testing.T) {
	tbl := versions.MustLoad()
	to := tbl.CurrentRow().Addon
	community := func(v string) *chart.Metadata {
		return &chart.Metadata{Name: "kruise", Home: communityHome, AppVersion: v}
	}
	cases := []struct {
		name    string
		from    *chart.Metadata
		force   bool
		wantErr error
	}{
		{"a community 1.8 release is taken over", community("1.8.3"), false, nil},
		{"a community 1.3 release must stop at 1.4 or 1.5 first", community("1.3.0"), false, versions.ErrNeedsWaypoint},
		{"a community 0.x release needs force", community("0.10.1"), false, versions.ErrNeedsForce},
		{"an add-on release goes by the add-on rows", &chart.Metadata{Name: "kruise", AppVersion: to}, false, nil},
		{"an add-on version the table lacks is unknown", &chart.Metadata{Name: "kruise", AppVersion: "1.8.3"}, false, versions.ErrUnknownVersion},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := upgradePath(tbl, tc.from, to, tc.force)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("upgradePath = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestRollbackTarget(t *testing.T) {
	rel := func(v int) *helmrelease.Release { return &helmrelease.Release{Name: "kruise-addon", Version: v} }
	hist := []*helmrelease.Release{rel(3), rel(1), rel(2)}
	cases := []struct {
		name        string
		want, got   int
		wantErrKind string
	}{
		{name: "0 is the revision before the latest", want: 0, got: 2},
		{name: "a named earlier revision", want: 1, got: 1},
		{name: "the latest itself is bad input", want: 3, wantErrKind: "invalid"},
		{name: "a revision that does not exist is bad input", want: 7, wantErrKind: "invalid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := rollbackTarget(hist, rel(3), tc.want)
			var invalid *InvalidError
			switch {
			case tc.wantErrKind == "invalid":
				if !errors.As(err, &invalid) {
					t.Errorf("err %v, want bad input", err)
				}
			case err != nil:
				t.Fatal(err)
			case r.Version != tc.got:
				t.Errorf("revision %d, want %d", r.Version, tc.got)
			}
		})
	}
	var refused *RefusedError
	if _, err := rollbackTarget([]*helmrelease.Release{rel(1)}, rel(1), 0); !errors.As(err, &refused) {
		t.Errorf("a release with one revision: %v, want a refusal", err)
	}
}
