package versions

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// ClusterVersion is a Kubernetes server version reduced to what compatibility depends on.
type ClusterVersion struct {
	Major, Minor int
	// Raw is the string it was parsed from, kept for messages.
	Raw string
}

// String renders "v1.30".
func (c ClusterVersion) String() string { return fmt.Sprintf("v%d.%d", c.Major, c.Minor) }

// ParseClusterVersion reads a server version as clusters report it: "v1.30.4", cloud builds such
// as "v1.30.4-eks-a1b2c3" or "v1.29.0-gke.1", "v1.30.4+k3s1", and the bare "1.28" or "1.28+"
// some providers put in the minor field.
func ParseClusterVersion(s string) (ClusterVersion, error) {
	raw := s
	s = strings.TrimSuffix(strings.TrimSpace(s), "+")
	v, err := semver.NewVersion(s)
	if err != nil {
		return ClusterVersion{}, fmt.Errorf("parse cluster version %q: %w", raw, err)
	}
	if v.Major() == 0 {
		return ClusterVersion{}, fmt.Errorf("parse cluster version %q: major version 0", raw)
	}
	return ClusterVersion{Major: int(v.Major()), Minor: int(v.Minor()), Raw: raw}, nil
}

// ClusterVersionFromInfo reads the major and minor fields of the apiserver's /version, where
// some providers append a "+" ("28+").
func ClusterVersionFromInfo(major, minor string) (ClusterVersion, error) {
	raw := major + "." + minor
	ma, err := strconv.Atoi(strings.TrimRight(strings.TrimSpace(major), "+"))
	if err != nil || ma <= 0 {
		return ClusterVersion{}, fmt.Errorf("parse cluster version %q: bad major %q", raw, major)
	}
	mi, err := strconv.Atoi(strings.TrimRight(strings.TrimSpace(minor), "+"))
	if err != nil || mi < 0 {
		return ClusterVersion{}, fmt.Errorf("parse cluster version %q: bad minor %q", raw, minor)
	}
	return ClusterVersion{Major: ma, Minor: mi, Raw: raw}, nil
}

// semver returns the version as a semver for constraint checks (patch 0).
func (c ClusterVersion) semver() *semver.Version {
	return semver.New(uint64(c.Major), uint64(c.Minor), 0, "", "")
}
