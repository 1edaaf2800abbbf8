package versions

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Reason says why an add-on version does or does not support a cluster.
type Reason string

const (
	// ReasonSupported: the row lists the cluster's minor.
	ReasonSupported Reason = "Supported"
	// ReasonUnknownAddon: no row has that add-on version.
	ReasonUnknownAddon Reason = "UnknownAddonVersion"
	// ReasonClusterTooOld: the cluster is older than the oldest minor of the row.
	ReasonClusterTooOld Reason = "ClusterTooOld"
	// ReasonClusterTooNew: the cluster is newer than the newest minor of the row.
	ReasonClusterTooNew Reason = "ClusterTooNew"
	// ReasonClusterNotListed: the minor lies inside the row's span but is skipped (e.g. v1.26 for 1.0.3).
	ReasonClusterNotListed Reason = "ClusterNotListed"
)

// Supported reports whether the add-on version supports the cluster, and why.
func (t *Table) Supported(addon string, c ClusterVersion) (bool, Reason) {
	r, ok := t.Row(addon)
	if !ok {
		return false, ReasonUnknownAddon
	}
	switch {
	case r.Supports(c):
		return true, ReasonSupported
	case c.Major < 1 || (c.Major == 1 && c.Minor < r.minors[0]):
		return false, ReasonClusterTooOld
	case c.Major > 1 || c.Minor > r.minors[len(r.minors)-1]:
		return false, ReasonClusterTooNew
	default:
		return false, ReasonClusterNotListed
	}
}

// NewestCompatible returns the newest add-on version that supports the cluster.
func (t *Table) NewestCompatible(c ClusterVersion) (Row, error) {
	for _, r := range t.rows {
		if r.Supports(c) {
			return r, nil
		}
	}
	return Row{}, fmt.Errorf("no add-on version supports cluster %s; the table covers %s", c, t.span())
}

// span renders every minor any row supports.
func (t *Table) span() string {
	set := map[int]bool{}
	for _, r := range t.rows {
		for _, m := range r.minors {
			set[m] = true
		}
	}
	var all []int
	for m := 0; len(all) < len(set); m++ {
		if set[m] {
			all = append(all, m)
		}
	}
	return formatMinors(all)
}

// Explain says in one sentence whether the add-on version supports the cluster and, if not,
// what would.
func (t *Table) Explain(addon string, c ClusterVersion) string {
	ok, reason := t.Supported(addon, c)
	if reason == ReasonUnknownAddon {
		return fmt.Sprintf("add-on version %s is not in the compatibility table; known versions: %s", addon, t.known())
	}
	r, _ := t.Row(addon)
	if ok {
		return fmt.Sprintf("add-on %s supports cluster %s (supported: %s)", r.Addon, c, r.ClusterRange())
	}
	var why string
	switch reason {
	case ReasonClusterTooOld:
		why = fmt.Sprintf("cluster %s is older than the oldest it supports", c)
	case ReasonClusterTooNew:
		why = fmt.Sprintf("cluster %s is newer than the newest it supports", c)
	default:
		why = fmt.Sprintf("cluster %s is not among them", c)
	}
	msg := fmt.Sprintf("add-on %s supports clusters %s; %s", r.Addon, r.ClusterRange(), why)
	if n, err := t.NewestCompatible(c); err == nil {
		return msg + fmt.Sprintf("; add-on %s supports %s", n.Addon, c)
	}
	return msg + fmt.Sprintf("; no add-on version supports %s (the table covers %s)", c, t.span())
}

func (t *Table) known() string {
	var vs []string
	for _, r := range t.rows {
		vs = append(vs, r.Addon)
	}
	return strings.Join(vs, ", ")
}

// RuntimeName returns the runtime of a node's status.nodeInfo.containerRuntimeVersion:
// "docker://24.0.7" -> "docker", "containerd://1.7.2" -> "containerd". A bare name is returned as is.
func RuntimeName(containerRuntimeVersion string) string {
	name, _, _ := strings.Cut(containerRuntimeVersion, "://")
	return strings.ToLower(strings.TrimSpace(name))
}

// RuntimeSupported reports whether the add-on version's daemon runs on nodes with the runtime
// (a name or a containerRuntimeVersion) in the cluster, with the reason when it does not.
func (t *Table) RuntimeSupported(addon string, c ClusterVersion, runtime string) (bool, string) {
	v, err := semver.NewVersion(addon)
	if err != nil {
		return false, fmt.Sprintf("add-on version %q: %v", addon, err)
	}
	name := RuntimeName(runtime)
	for _, rr := range t.runtimes {
		if rr.Runtime != name || !rr.clusters.Check(c.semver()) {
			continue
		}
		on := fmt.Sprintf("%s nodes (via %s) in cluster %s", rr.Runtime, rr.Via, c)
		switch {
		case rr.supported.Check(v):
			return true, ""
		case rr.unsupported.Check(v):
			return false, fmt.Sprintf("kruise-daemon of add-on %s cannot run on %s: %s; add-on versions %s can", addon, on, rr.Reason, readable(rr.Supported))
		default:
			return false, fmt.Sprintf("kruise-daemon of add-on %s is not known to run on %s; add-on versions %s can", addon, on, readable(rr.Supported))
		}
	}
	return true, ""
}

// readable drops the "-0" that makes constraints match pre-releases: ">=1.1.10-0" -> ">=1.1.10".
func readable(constraint string) string { return strings.ReplaceAll(constraint, "-0", "") }
