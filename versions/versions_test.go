package versions

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustCluster(t *testing.T, s string) ClusterVersion {
	t.Helper()
	c, err := ParseClusterVersion(s)
	if err != nil {
		t.Fatalf("ParseClusterVersion(%q): %v", s, err)
	}
	return c
}

func TestEmbeddedTableLoads(t *testing.T) {
	tbl, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var got []string
	for _, r := range tbl.Rows() {
		got = append(got, r.Addon+" "+r.ClusterRange()+" "+r.Community)
	}
	want := []string{
		"1.2.0 v1.29–v1.37 1.8.2",
		"1.1.42 v1.29–v1.36 1.8.2rc1",
		"1.1.36 v1.29–v1.36 1.8.2rc1",
		"1.1.35 v1.29–v1.35 1.8.2rc1",
		"1.1.26 v1.29–v1.35 1.8.2rc1",
		"1.1.21 v1.28–v1.34 1.8.2rc1",
		"1.1.20 v1.28–v1.34 1.8.2rc1",
		"1.1.18 v1.28–v1.34 1.8.2rc1",
		"1.1.12 v1.28–v1.34 1.8.2rc1",
		"1.0.40 v1.27–v1.33 1.5.4",
		"1.0.35 v1.25, v1.27–v1.32 1.5.4",
		"1.0.23 v1.25, v1.27–v1.31 1.5.4",
		"1.0.12 v1.23, v1.25, v1.27–v1.30 1.5.4",
		"1.0.3 v1.23, v1.25, v1.27–v1.29 1.5.4",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	cur := Current()
	if d := cmp.Diff([]string{"1.2.0", "v1.29–v1.37", "v1.37 support, CloneSet in-place update machinery", "1.8.2"},
		[]string{cur.Addon, cur.ClusterRange(), cur.Features, cur.Community}); d != "" {
		t.Errorf("current row (-want +got):\n%s", d)
	}
}

func TestParseRejectsBrokenTables(t *testing.T) {
	base := "current: \"1.0.0\"\nrows:\n- {addon: \"1.0.0\", clusters: [\"1.29-1.30\"], features: x, community: \"1.8.2\"}\n"
	cases := []struct {
		name    string
		data    string
		wantErr string
	}{
		{"a well-formed table loads", base, ""},
		{"an unknown field is refused", base + "extra: 1\n", "unknown field"},
		{"a current version without a row is refused", strings.Replace(base, `current: "1.0.0"`, `current: "9.9.9"`, 1), "has no row"},
		{"a backwards cluster range is refused", strings.Replace(base, "1.29-1.30", "1.30-1.29", 1), "runs backwards"},
		{"a cluster that is not 1.x is refused", strings.Replace(base, "1.29-1.30", "2.1", 1), "not a Kubernetes 1.x minor"},
		{"a row listed twice is refused", base + "- {addon: \"1.0.0\", clusters: [\"1.29\"], features: x, community: \"1.8.2\"}\n", "listed twice"},
		{"a non-semver add-on version is refused", strings.Replace(base, `addon: "1.0.0"`, `addon: "one"`, 1), "add-on version"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse([]byte(tc.data))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if (tc.wantErr == "") != (err == nil) || !strings.Contains(got, tc.wantErr) {
				t.Errorf("parse error = %q, want one containing %q", got, tc.wantErr)
			}
		})
	}
}

// parseString and parseInfo are the two ways a cluster version is read: from a version
// string, and from the discovery Info's major and minor fields.
func parseString(in string) func() (ClusterVersion, error) {
	return func() (ClusterVersion, error) { return ParseClusterVersion(in) }
}

func parseInfo(major, minor string) func() (ClusterVersion, error) {
	return func() (ClusterVersion, error) { return ClusterVersionFromInfo(major, minor) }
}

func TestParseClusterVersion(t *testing.T) {
	cases := []struct {
		name    string
		parse   func() (ClusterVersion, error)
		want    string
		wantErr bool
	}{
		{"a plain server version keeps major and minor", parseString("v1.30.4"), "v1.30", false},
		{"an EKS build string parses", parseString("v1.30.4-eks-a1b2c3"), "v1.30", false},
		{"a GKE build string parses", parseString("v1.29.0-gke.1"), "v1.29", false},
		{"build metadata is ignored", parseString("v1.31.2+k3s1"), "v1.31", false},
		{"a minor with a plus parses", parseString("1.28+"), "v1.28", false},
		{"a bare major.minor parses", parseString("1.37"), "v1.37", false},
		{"garbage is refused", parseString("latest"), "", true},
		{"an empty string is refused", parseString(""), "", true},
		{"major 0 is refused", parseString("v0.0.0"), "", true},
		{"plain Info fields parse", parseInfo("1", "30"), "v1.30", false},
		{"an Info minor with a plus parses", parseInfo("1", "28+"), "v1.28", false},
		{"an empty Info minor is refused", parseInfo("1", ""), "", true},
		{"a non-number Info major is refused", parseInfo("x", "28"), "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.parse()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil {
				if d := cmp.Diff(tc.want, got.String()); d != "" {
					t.Errorf("version (-want +got):\n%s", d)
				}
			}
		})
	}
}

func TestSupported(t *testing.T) {
	tbl := MustLoad()
	cases := []struct {
		name       string
		addon      string
		cluster    string
		wantOK     bool
		wantReason Reason
	}{
		{"this build supports v1.37", "1.2.0", "v1.37.2", true, ReasonSupported},
		{"this build supports an EKS v1.30", "1.2.0", "v1.30.4-eks-a1b2c3", true, ReasonSupported},
		{"this build supports its oldest minor", "1.2.0", "1.29+", true, ReasonSupported},
		{"this build refuses v1.28 as too old", "1.2.0", "v1.28.9", false, ReasonClusterTooOld},
		{"this build refuses v1.24 as too old", "1.2.0", "v1.24.3", false, ReasonClusterTooOld},
		{"this build refuses v1.38 as too new", "1.2.0", "v1.38.0", false, ReasonClusterTooNew},
		{"1.1.42 refuses v1.37 as too new", "1.1.42", "v1.37.0", false, ReasonClusterTooNew},
		{"1.0.3 supports v1.23", "1.0.3", "v1.23.17", true, ReasonSupported},
		{"1.0.3 skips v1.26 inside its span", "1.0.3", "v1.26.1", false, ReasonClusterNotListed},
		{"1.0.35 supports v1.25", "1.0.35", "v1.25.0", true, ReasonSupported},
		{"1.0.40 dropped v1.25", "1.0.40", "v1.25.0", false, ReasonClusterTooOld},
		{"a v-prefixed add-on version is found", "v1.1.12", "v1.34.1", true, ReasonSupported},
		{"an unknown add-on version is reported", "1.1.99", "v1.30.0", false, ReasonUnknownAddon},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason := tbl.Supported(tc.addon, mustCluster(t, tc.cluster))
			if d := cmp.Diff([]any{tc.wantOK, tc.wantReason}, []any{ok, reason}); d != "" {
				t.Errorf("Supported (-want +got):\n%s", d)
			}
		})
	}
}

func TestNewestCompatible(t *testing.T) {
	tbl := MustLoad()
	cases := []struct {
		name    string
		cluster string
		want    string
		wantErr string
	}{
		{"v1.37 gets this build", "v1.37.2", "1.2.0", ""},
		{"v1.29 gets this build", "v1.29.0-gke.1", "1.2.0", ""},
		{"v1.28 gets the newest 1.1 that still lists it", "1.28+", "1.1.21", ""},
		{"v1.27 gets the last 1.0", "v1.27.3", "1.0.40", ""},
		{"v1.25 gets the last row that lists it", "v1.25.16", "1.0.35", ""},
		{"v1.23 gets 1.0.12", "v1.23.1", "1.0.12", ""},
		{"v1.24 is supported by no row", "v1.24.3", "", "no add-on version supports cluster v1.24; the table covers v1.23, v1.25, v1.27–v1.37"},
		{"v1.38 is supported by no row", "v1.38.0", "", "no add-on version supports cluster v1.38"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tbl.NewestCompatible(mustCluster(t, tc.cluster))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewestCompatible: %v", err)
			}
			if d := cmp.Diff(tc.want, got.Addon); d != "" {
				t.Errorf("add-on (-want +got):\n%s", d)
			}
		})
	}
}

func TestExplain(t *testing.T) {
	tbl := MustLoad()
	cases := []struct {
		name    string
		addon   string
		cluster string
		want    string
	}{
		{"a supported pair says so with the range", "1.2.0", "v1.30.4-eks-a1b2c3",
			"add-on 1.2.0 supports cluster v1.30 (supported: v1.29–v1.37)"},
		{"an old cluster names the range and that nothing supports it", "1.2.0", "v1.24.3",
			"add-on 1.2.0 supports clusters v1.29–v1.37; cluster v1.24 is older than the oldest it supports; no add-on version supports v1.24 (the table covers v1.23, v1.25, v1.27–v1.37)"},
		{"a too-new cluster points at the add-on that supports it", "1.1.42", "v1.37.0",
			"add-on 1.1.42 supports clusters v1.29–v1.36; cluster v1.37 is newer than the newest it supports; add-on 1.2.0 supports v1.37"},
		{"a skipped minor is named", "1.0.3", "v1.26.0",
			"add-on 1.0.3 supports clusters v1.23, v1.25, v1.27–v1.29; cluster v1.26 is not among them; no add-on version supports v1.26 (the table covers v1.23, v1.25, v1.27–v1.37)"},
		{"an unknown add-on lists the known ones", "0.9.0", "v1.30.0",
			"add-on version 0.9.0 is not in the compatibility table; known versions: 1.2.0, 1.1.42, 1.1.36, 1.1.35, 1.1.26, 1.1.21, 1.1.20, 1.1.18, 1.1.12, 1.0.40, 1.0.35, 1.0.23, 1.0.12, 1.0.3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, tbl.Explain(tc.addon, mustCluster(t, tc.cluster))); d != "" {
				t.Errorf("Explain (-want +got):\n%s", d)
			}
		})
	}
}

func TestRuntimeSupported(t *testing.T) {
	tbl := MustLoad()
	cases := []struct {
		name       string
		addon      string
		cluster    string
		runtime    string
		wantOK     bool
		wantReason string
	}{
		{"1.0.40 cannot run the daemon on docker in v1.25", "1.0.40", "v1.25.0", "docker://20.10.7", false, "cannot run on docker nodes (via cri-dockerd) in cluster v1.25"},
		{"1.0.3 cannot run the daemon on docker in v1.29", "1.0.3", "v1.29.1", "docker://24.0.7", false, "add-on versions >=1.1.10 can"},
		{"1.0.12 runs the daemon on docker before v1.25", "1.0.12", "v1.23.4", "docker://19.3.1", true, ""},
		{"1.1.10 runs the daemon on docker", "1.1.10", "v1.28.0", "docker://24.0.7", true, ""},
		{"this build runs the daemon on docker in v1.37", "1.2.0", "v1.37.2", "docker", true, ""},
		{"a version between the rules is not known to work", "1.1.0", "v1.28.0", "docker://24.0.7", false, "is not known to run on docker nodes"},
		{"containerd has no rule", "1.0.3", "v1.29.0", "containerd://1.7.2", true, ""},
		{"a bad add-on version is reported", "x", "v1.29.0", "docker://1", false, `add-on version "x"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason := tbl.RuntimeSupported(tc.addon, mustCluster(t, tc.cluster), tc.runtime)
			if ok != tc.wantOK || !strings.Contains(reason, tc.wantReason) || (tc.wantReason == "") != (reason == "") {
				t.Errorf("RuntimeSupported = (%v, %q), want (%v, containing %q)", ok, reason, tc.wantOK, tc.wantReason)
			}
		})
	}
}

func TestCheckUpgrade(t *testing.T) {
	tbl := MustLoad()
	addon, community := tbl.CheckUpgrade, tbl.CheckCommunityUpgrade
	cases := []struct {
		name    string
		check   func(from, to string, opts UpgradeOptions) error
		from    string
		to      string
		opts    UpgradeOptions
		wantErr error
	}{
		{"an upgrade to this build from the last 1.1 is allowed", addon, "1.1.42", "1.2.0", UpgradeOptions{}, nil},
		{"an upgrade from the first release to this build is allowed (1.5 -> 1.8)", addon, "1.0.3", "1.2.0", UpgradeOptions{}, nil},
		{"re-applying the same version is allowed", addon, "1.2.0", "1.2.0", UpgradeOptions{}, nil},
		{"a downgrade is refused", addon, "1.2.0", "1.1.42", UpgradeOptions{}, ErrDowngrade},
		{"a downgrade with force is still refused", addon, "1.2.0", "1.0.40", UpgradeOptions{Force: true}, ErrDowngrade},
		{"a rollback is allowed", addon, "1.2.0", "1.0.40", UpgradeOptions{Rollback: true}, nil},
		{"an unknown source is refused", addon, "1.1.99", "1.2.0", UpgradeOptions{}, ErrUnknownVersion},
		{"an unknown target is refused", addon, "1.2.0", "1.3.0", UpgradeOptions{}, ErrUnknownVersion},
		{"0.x to 1.x without force is refused", community, "0.10.1", "1.3.0", UpgradeOptions{}, ErrNeedsForce},
		{"0.x to 1.x with force is allowed", community, "0.10.1", "1.3.0", UpgradeOptions{Force: true}, nil},
		{"0.x to 1.8 with force must still stop at 1.4 or 1.5", community, "0.10.1", "1.8.2", UpgradeOptions{Force: true}, ErrNeedsWaypoint},
		{"1.3 to 1.6 must stop at 1.4 or 1.5", community, "1.3.0", "1.6.0", UpgradeOptions{}, ErrNeedsWaypoint},
		{"1.3 to a 1.8 release candidate must stop at 1.4 or 1.5", community, "1.3.0", "1.8.2rc1", UpgradeOptions{}, ErrNeedsWaypoint},
		{"1.3 to 1.5 is allowed", community, "1.3.0", "1.5.4", UpgradeOptions{}, nil},
		{"1.4 to 1.8 is allowed", community, "1.4.0", "1.8.2", UpgradeOptions{}, nil},
		{"1.5 to 1.8 is allowed", community, "1.5.4", "1.8.2", UpgradeOptions{}, nil},
		{"a release candidate to its release is allowed", community, "1.8.2rc1", "1.8.2", UpgradeOptions{}, nil},
		{"a release to its release candidate is a downgrade", community, "1.8.2", "1.8.2rc1", UpgradeOptions{}, ErrDowngrade},
		{"a rollback from 1.8 to 1.3 is allowed", community, "1.8.2", "1.3.0", UpgradeOptions{Rollback: true}, nil},
		{"an unparseable version is refused", community, "one", "1.8.2", UpgradeOptions{}, ErrUnknownVersion},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.check(tc.from, tc.to, tc.opts)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("check = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestCheckTakeover(t *testing.T) {
	tbl := MustLoad()
	current := tbl.Rows()[0].Addon
	for _, r := range tbl.Rows() {
		if r.Community == "1.8.2" {
			current = r.Addon
		}
	}
	cases := []struct {
		name    string
		from    string
		opts    UpgradeOptions
		wantErr error
	}{
		{"a newer patch of the same community minor is taken over", "1.8.3", UpgradeOptions{}, nil},
		{"an older patch of the same community minor is taken over", "1.8.0", UpgradeOptions{}, nil},
		{"1.5 is taken over along the community path", "1.5.4", UpgradeOptions{}, nil},
		{"1.3 must stop at 1.4 or 1.5 first", "1.3.0", UpgradeOptions{}, ErrNeedsWaypoint},
		{"0.x needs force and then a waypoint", "0.10.1", UpgradeOptions{Force: true}, ErrNeedsWaypoint},
		{"a newer community minor is a downgrade", "1.9.0", UpgradeOptions{}, ErrDowngrade},
		{"an unparseable community version is refused", "latest", UpgradeOptions{}, ErrUnknownVersion},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tbl.CheckTakeover(tc.from, current, tc.opts)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("CheckTakeover(%s, %s) = %v, want %v", tc.from, current, err, tc.wantErr)
			}
		})
	}
	if err := tbl.CheckTakeover("1.8.3", "0.0.1", UpgradeOptions{}); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("an add-on version not in the table: %v, want ErrUnknownVersion", err)
	}
}
