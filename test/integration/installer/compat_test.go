package installer

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/preflight"
)

func verdict(r preflight.Report, check string) preflight.Verdict {
	for _, v := range r.Verdicts {
		if v.Check == check {
			return v
		}
	}
	return preflight.Verdict{}
}

// TestClusterVersionRefused runs preflight on this cluster's facts as a v1.24.3 cluster would
// report them.
func TestClusterVersionRefused(t *testing.T) {
	i, _ := newInstaller(t)
	f, err := i.Facts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(6, len(f.Nodes)); diff != "" {
		t.Fatalf("facts see the simulated nodes (-want +got):\n%s", diff)
	}
	f.ServerVersion = "v1.24.3"
	res, err := installer.PreflightFacts(installer.Options{}, f)
	if err != nil {
		t.Fatal(err)
	}
	got := verdict(res.Report, preflight.CheckClusterVersion)
	want := preflight.Verdict{
		Check: preflight.CheckClusterVersion, Severity: preflight.Refused,
		Message: "add-on 1.2.0 supports clusters v1.29–v1.37; cluster v1.24 is older than the oldest it supports; no add-on version supports v1.24 (the table covers v1.23, v1.25, v1.27–v1.37)",
		Fix:     "upgrade the cluster to a supported version",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verdict (-want +got):\n%s", diff)
	}
}

// TestDockerRuntimeNodes checks node c2 (docker://24.0.7) against an old add-on version and the
// current one, on this cluster's live facts.
func TestDockerRuntimeNodes(t *testing.T) {
	i, _ := newInstaller(t)
	cases := map[string]struct {
		opts         installer.Options
		wantSeverity preflight.Severity
		wantExcluded []string
	}{
		"add-on 1.0.40 cannot run its daemon on docker nodes of a v1.25+ cluster": {
			opts: installer.Options{AddonVersion: "1.0.40"}, wantSeverity: preflight.Refused,
		},
		"add-on 1.0.40 keeps its daemon off the docker node when asked": {
			opts: installer.Options{AddonVersion: "1.0.40", ExcludeUnsupportedNodes: true}, wantSeverity: preflight.Warning, wantExcluded: []string{"c2"},
		},
		"the current add-on runs on docker nodes": {
			opts: installer.Options{}, wantSeverity: preflight.OK,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res, err := i.Preflight(context.Background(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			got := verdict(res.Report, preflight.CheckRuntime)
			if diff := cmp.Diff(tc.wantSeverity, got.Severity); diff != "" {
				t.Errorf("runtime verdict %q (-want +got):\n%s", got.Message, diff)
			}
			if diff := cmp.Diff(tc.wantExcluded, res.Report.DaemonExcludeNodes); diff != "" {
				t.Errorf("daemon exclusions (-want +got):\n%s", diff)
			}
		})
	}
}
