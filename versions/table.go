package versions

import (
	_ "embed"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	"sigs.k8s.io/yaml"
)

//go:embed table.yaml
var tableYAML []byte

// Table is the loaded compatibility table. It is read-only once loaded.
type Table struct {
	current  string
	rows     []Row // newest add-on version first
	runtimes []runtimeRule
	upgrade  upgradeRules
}

// Row is one add-on release.
type Row struct {
	// Addon is the add-on version, e.g. "1.2.0".
	Addon string `json:"addon"`
	// Clusters lists the supported Kubernetes minors as written in the table ("1.25", "1.27-1.32").
	Clusters []string `json:"clusters"`
	// Features says what the release brought.
	Features string `json:"features"`
	// Community is the OpenKruise version the release is wire-compatible with, e.g. "1.8.2rc1".
	Community string `json:"community"`

	addon     *semver.Version
	community *semver.Version
	minors    []int // sorted Kubernetes 1.x minors
}

// Supports reports whether the row lists the cluster's minor.
func (r Row) Supports(c ClusterVersion) bool {
	if c.Major != 1 {
		return false
	}
	i := sort.SearchInts(r.minors, c.Minor)
	return i < len(r.minors) && r.minors[i] == c.Minor
}

// Minors returns the supported Kubernetes 1.x minors, ascending.
func (r Row) Minors() []int { return append([]int(nil), r.minors...) }

// ClusterRange renders the supported clusters the way the documentation does: "v1.25, v1.27–v1.32".
func (r Row) ClusterRange() string { return formatMinors(r.minors) }

type fileTable struct {
	Current  string        `json:"current"`
	Rows     []Row         `json:"rows"`
	Runtimes []runtimeRule `json:"runtimes"`
	Upgrade  upgradeRules  `json:"upgrade"`
}

type runtimeRule struct {
	Runtime     string `json:"runtime"`
	Via         string `json:"via"`
	Clusters    string `json:"clusters"`
	Unsupported string `json:"unsupported"`
	Supported   string `json:"supported"`
	Reason      string `json:"reason"`

	clusters, unsupported, supported *semver.Constraints
}

type upgradeRules struct {
	NeedsForce []pathRule `json:"needsForce"`
	Waypoints  []pathRule `json:"waypoints"`
}

type pathRule struct {
	From   string   `json:"from"`
	To     string   `json:"to"`
	Via    []string `json:"via,omitempty"`
	Reason string   `json:"reason"`

	from, to *semver.Constraints
	via      []*semver.Constraints
}

// Load parses the embedded table.
func Load() (*Table, error) { return parse(tableYAML) }

// MustLoad is Load for callers that treat a broken embedded table as a build defect; the
// package's tests prove the embedded table loads.
func MustLoad() *Table {
	t, err := Load()
	if err != nil {
		panic(fmt.Sprintf("versions: embedded table: %v", err))
	}
	return t
}

// Current returns the row of this build.
func Current() Row {
	t := MustLoad()
	r, _ := t.Row(t.current)
	return r
}

func parse(data []byte) (*Table, error) {
	var f fileTable
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("parse table: %w", err)
	}
	t := &Table{current: f.Current, upgrade: f.Upgrade}
	seen := map[string]bool{}
	for _, r := range f.Rows {
		var err error
		if r.addon, err = semver.StrictNewVersion(r.Addon); err != nil {
			return nil, fmt.Errorf("row %q: add-on version: %w", r.Addon, err)
		}
		if seen[r.addon.String()] {
			return nil, fmt.Errorf("row %q: listed twice", r.Addon)
		}
		seen[r.addon.String()] = true
		if r.community, err = parseCommunity(r.Community); err != nil {
			return nil, fmt.Errorf("row %q: community version: %w", r.Addon, err)
		}
		if r.minors, err = parseMinors(r.Clusters); err != nil {
			return nil, fmt.Errorf("row %q: clusters: %w", r.Addon, err)
		}
		t.rows = append(t.rows, r)
	}
	sort.SliceStable(t.rows, func(i, j int) bool { return t.rows[i].addon.GreaterThan(t.rows[j].addon) })
	if _, ok := t.Row(t.current); !ok {
		return nil, fmt.Errorf("current version %q has no row", t.current)
	}
	for i := range f.Runtimes {
		rr := f.Runtimes[i]
		var err error
		for _, c := range []struct {
			dst **semver.Constraints
			src string
		}{{&rr.clusters, rr.Clusters}, {&rr.unsupported, rr.Unsupported}, {&rr.supported, rr.Supported}} {
			if *c.dst, err = semver.NewConstraint(c.src); err != nil {
				return nil, fmt.Errorf("runtime %q: constraint %q: %w", rr.Runtime, c.src, err)
			}
		}
		t.runtimes = append(t.runtimes, rr)
	}
	for _, rules := range [][]pathRule{t.upgrade.NeedsForce, t.upgrade.Waypoints} {
		for i := range rules {
			if err := rules[i].compile(); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

func (p *pathRule) compile() error {
	var err error
	if p.from, err = semver.NewConstraint(p.From); err != nil {
		return fmt.Errorf("upgrade rule from %q: %w", p.From, err)
	}
	if p.to, err = semver.NewConstraint(p.To); err != nil {
		return fmt.Errorf("upgrade rule to %q: %w", p.To, err)
	}
	for _, v := range p.Via {
		// "1.4" means any 1.4.x, pre-releases included.
		c, err := semver.NewConstraint("~" + v + ".0-0")
		if err != nil {
			return fmt.Errorf("upgrade rule via %q: %w", v, err)
		}
		p.via = append(p.via, c)
	}
	return nil
}

// communityRC matches the published spelling of release candidates, "1.8.2rc1".
var communityRC = regexp.MustCompile(`^v?(\d+\.\d+\.\d+)(rc\d+|alpha\d*|beta\d*)$`)

// parseCommunity reads an OpenKruise version, accepting "1.8.2rc1" as the semver "1.8.2-rc1".
func parseCommunity(s string) (*semver.Version, error) {
	if m := communityRC.FindStringSubmatch(s); m != nil {
		s = m[1] + "-" + m[2]
	}
	return semver.NewVersion(s)
}

func parseMinors(specs []string) ([]int, error) {
	if len(specs) == 0 {
		return nil, fmt.Errorf("no clusters")
	}
	set := map[int]bool{}
	for _, s := range specs {
		lo, hi, ok := strings.Cut(s, "-")
		if !ok {
			hi = lo
		}
		a, err := minorOf(lo)
		if err != nil {
			return nil, err
		}
		b, err := minorOf(hi)
		if err != nil {
			return nil, err
		}
		if b < a {
			return nil, fmt.Errorf("range %q runs backwards", s)
		}
		for m := a; m <= b; m++ {
			set[m] = true
		}
	}
	out := make([]int, 0, len(set))
	for m := range set {
		out = append(out, m)
	}
	sort.Ints(out)
	return out, nil
}

func minorOf(s string) (int, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	maj, min, ok := strings.Cut(s, ".")
	if !ok || maj != "1" {
		return 0, fmt.Errorf("%q is not a Kubernetes 1.x minor", s)
	}
	m, err := strconv.Atoi(min)
	if err != nil {
		return 0, fmt.Errorf("%q is not a Kubernetes 1.x minor: %w", s, err)
	}
	return m, nil
}

// formatMinors joins runs of consecutive minors: [23 25 27 28 29] -> "v1.23, v1.25, v1.27–v1.29".
func formatMinors(minors []int) string {
	var parts []string
	for i := 0; i < len(minors); {
		j := i
		for j+1 < len(minors) && minors[j+1] == minors[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprintf("v1.%d", minors[i]))
		} else {
			parts = append(parts, fmt.Sprintf("v1.%d–v1.%d", minors[i], minors[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// Rows returns every row, newest add-on version first.
func (t *Table) Rows() []Row { return append([]Row(nil), t.rows...) }

// Row finds the row of an add-on version ("1.2.0" or "v1.2.0").
func (t *Table) Row(addon string) (Row, bool) {
	v, err := semver.NewVersion(addon)
	if err != nil {
		return Row{}, false
	}
	for _, r := range t.rows {
		if r.addon.Equal(v) {
			return r, true
		}
	}
	return Row{}, false
}

// CurrentRow returns the row of this build.
func (t *Table) CurrentRow() Row {
	r, _ := t.Row(t.current)
	return r
}

// ForCluster returns the rows that support the cluster, newest first.
func (t *Table) ForCluster(c ClusterVersion) []Row {
	var out []Row
	for _, r := range t.rows {
		if r.Supports(c) {
			out = append(out, r)
		}
	}
	return out
}
