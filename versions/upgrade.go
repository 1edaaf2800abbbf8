package versions

import (
	"errors"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

var (
	// ErrDowngrade: the target is older than the installed version and no rollback was asked.
	ErrDowngrade = errors.New("downgrade refused")
	// ErrNeedsForce: the path crosses a community major version and needs force.
	ErrNeedsForce = errors.New("upgrade needs force")
	// ErrNeedsWaypoint: the path must stop at an intermediate version first.
	ErrNeedsWaypoint = errors.New("upgrade must pass through an intermediate version")
	// ErrUnknownVersion: a version is neither an add-on row nor a parseable community version.
	ErrUnknownVersion = errors.New("unknown version")
)

// UpgradeOptions are what the user asked for.
type UpgradeOptions struct {
	// Force allows paths that the rules mark as needing force.
	Force bool
	// Rollback allows going to an older version.
	Rollback bool
}

// CheckUpgrade decides whether going from one add-on version to another is allowed. Each side
// is mapped to its community version by the table, and the community path rules apply to those.
// An equal version is allowed (a re-apply).
func (t *Table) CheckUpgrade(from, to string, opts UpgradeOptions) error {
	fr, ok := t.Row(from)
	if !ok {
		return fmt.Errorf("upgrade from %q: %w: not an add-on version in the table", from, ErrUnknownVersion)
	}
	tr, ok := t.Row(to)
	if !ok {
		return fmt.Errorf("upgrade to %q: %w: not an add-on version in the table", to, ErrUnknownVersion)
	}
	if tr.addon.LessThan(fr.addon) && !opts.Rollback {
		return fmt.Errorf("add-on %s -> %s: %w: the target is older; go back to an earlier revision with a rollback (kruise-addon rollback)", fr.Addon, tr.Addon, ErrDowngrade)
	}
	if err := t.checkCommunity(fr.community, tr.community, opts); err != nil {
		return fmt.Errorf("add-on %s -> %s: %w", fr.Addon, tr.Addon, err)
	}
	return nil
}

// CheckCommunityUpgrade applies the path rules to two community (OpenKruise) versions, e.g.
// when taking over from a community installation. "1.8.2rc1" spellings are accepted.
func (t *Table) CheckCommunityUpgrade(from, to string, opts UpgradeOptions) error {
	f, err := parseCommunity(from)
	if err != nil {
		return fmt.Errorf("upgrade from %q: %w: %w", from, ErrUnknownVersion, err)
	}
	v, err := parseCommunity(to)
	if err != nil {
		return fmt.Errorf("upgrade to %q: %w: %w", to, ErrUnknownVersion, err)
	}
	if v.LessThan(f) && !opts.Rollback {
		return fmt.Errorf("community %s -> %s: %w: the target is older; go back to an earlier revision with a rollback (kruise-addon rollback)", from, to, ErrDowngrade)
	}
	return t.checkCommunity(f, v, opts)
}

func (t *Table) checkCommunity(from, to *semver.Version, opts UpgradeOptions) error {
	if to.LessThan(from) {
		// A rollback retraces a path that was allowed forwards.
		return nil
	}
	for _, r := range t.upgrade.NeedsForce {
		if r.from.Check(from) && r.to.Check(to) && !opts.Force {
			return fmt.Errorf("community %s -> %s: %w: %s", from.Original(), to.Original(), ErrNeedsForce, r.Reason)
		}
	}
	for _, r := range t.upgrade.Waypoints {
		if r.from.Check(from) && r.to.Check(to) {
			return fmt.Errorf("community %s -> %s: %w: %s; upgrade to %s first", from.Original(), to.Original(), ErrNeedsWaypoint, r.Reason, strings.Join(r.Via, " or "))
		}
	}
	return nil
}

// CheckTakeover decides whether the add-on version to may take over a release of the
// community (OpenKruise) chart at community version from: the community path rules apply
// from that version to the one the add-on is wire-compatible with. Within one community minor
// the patch level does not matter (the add-on serves that minor's wire contract), so a 1.8.3
// release may be taken over by an add-on compatible with 1.8.2; a newer minor is a downgrade.
func (t *Table) CheckTakeover(from, to string, opts UpgradeOptions) error {
	tr, ok := t.Row(to)
	if !ok {
		return fmt.Errorf("take over with %q: %w: not an add-on version in the table", to, ErrUnknownVersion)
	}
	f, err := parseCommunity(from)
	if err != nil {
		return fmt.Errorf("take over from community %q: %w: %w", from, ErrUnknownVersion, err)
	}
	if f.Major() == tr.community.Major() && f.Minor() == tr.community.Minor() {
		return nil
	}
	if err := t.CheckCommunityUpgrade(from, tr.Community, opts); err != nil {
		return fmt.Errorf("take over community release %s with add-on %s: %w", from, tr.Addon, err)
	}
	return nil
}
