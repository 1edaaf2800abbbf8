package installer

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/kruise-addon/kruise-addon/installer/release"
	"github.com/kruise-addon/kruise-addon/versions"
)

// RollbackOptions are what a rollback takes.
type RollbackOptions struct {
	ReleaseName string `json:"releaseName,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	// ToRevision is the revision to go back to; 0 is the one before the latest.
	ToRevision int `json:"toRevision,omitempty"`
	// Timeout bounds the rollback and its wait for readiness.
	Timeout time.Duration `json:"timeout,omitempty"`
	// Wait, on unless set to false, waits for every component to be ready.
	Wait *bool `json:"wait,omitempty"`
	// Force goes back to an add-on version that does not support the cluster's version.
	Force bool `json:"force,omitempty"`
}

// Rollback goes back to an earlier revision of the release, as Helm's rollback: the way back
// from an upgrade, and the only way to an older add-on version (an upgrade to one is refused).
// It holds the cluster's lock, refuses a stuck or absent release, and checks the version path
// from the latest revision's add-on version to the target's under the table's rules for a
// rollback, and that the target supports the cluster's version (unless Force). A rollback that fails leaves the release failed, never pending, as Helm's does; the
// CRDs are applied as the target revision's chart renders them (they are kept on uninstall, so
// no custom resource is lost either way).
func (i *Installer) Rollback(ctx context.Context, ro RollbackOptions) (*Result, error) {
	o := Options{ReleaseName: ro.ReleaseName, Namespace: ro.Namespace, Timeout: ro.Timeout, Wait: ro.Wait}.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	if ro.ToRevision < 0 {
		return nil, &InvalidError{Err: fmt.Errorf("toRevision must be a revision number of the release, or 0 for the one before the latest; got %d", ro.ToRevision)}
	}
	ctx, cancel := withDeadline(ctx, o.Timeout)
	defer cancel(nil)
	lock, err := i.lockCluster(ctx, release.CmdRollback, o)
	if err != nil {
		return nil, err
	}
	defer lock.release()
	defer lock.onLost(cancel)()
	store, last, d, err := i.openRelease(ctx, release.CmdRollback, o)
	if err != nil {
		return nil, err
	}
	if d.Step == release.StepRefuse {
		return nil, &RefusedError{Reason: d.Reason, Locked: d.Locked}
	}
	hist, err := store.Config().Releases.History(o.ReleaseName)
	if err != nil {
		return nil, fmt.Errorf("read the history of release %s: %w", o.ReleaseName, err)
	}
	target, err := rollbackTarget(hist, last, ro.ToRevision)
	if err != nil {
		return nil, err
	}
	from, to := last.Chart.Metadata.AppVersion, target.Chart.Metadata.AppVersion
	if err := i.table.CheckUpgrade(from, to, versions.UpgradeOptions{Rollback: true}); err != nil {
		return nil, &RefusedError{Reason: err.Error()}
	}
	if err := i.supportsCluster(to, ro.Force); err != nil {
		return nil, err
	}
	left := remaining(ctx, o.Timeout)
	err = i.withProgress(ctx, o.Namespace, readinessWait(o, left), func() error {
		a := release.NewRollback(store.Config(), release.Options{Timeout: left}, target.Version)
		a.Wait = o.waits()
		return a.Run(o.ReleaseName)
	})
	after, lerr := store.Last(ctx, o.ReleaseName)
	if err != nil {
		if lerr == nil && after != nil && release.StateOf(after) == release.Pending {
			// Helm's own failure path marks it failed; a cancelled context may not have.
			_ = store.MarkFailed(after, fmt.Sprintf("rollback failed: %v", err))
		}
		return nil, fmt.Errorf("roll release %s back to revision %d: %w", o.ReleaseName, target.Version, err)
	}
	if lerr != nil {
		return nil, lerr
	}
	res := resultOf(after, release.StepRollback)
	res.Message = fmt.Sprintf("rolled back to revision %d (add-on %s); this is revision %d", target.Version, to, after.Version)
	return res, nil
}

// rollbackTarget picks the revision to go back to: want, or with 0 the newest one before the
// latest. A revision that does not exist, or is the latest, is bad input naming those there are.
func rollbackTarget(hist []*helmrelease.Release, last *helmrelease.Release, want int) (*helmrelease.Release, error) {
	slices.SortFunc(hist, func(a, b *helmrelease.Release) int { return a.Version - b.Version })
	var others []string
	var prev *helmrelease.Release
	for _, r := range hist {
		if r.Version == last.Version {
			continue
		}
		others = append(others, strconv.Itoa(r.Version))
		if r.Version < last.Version {
			prev = r
		}
		if r.Version == want {
			return r, nil
		}
	}
	if want == 0 && prev != nil {
		return prev, nil
	}
	if len(others) == 0 {
		return nil, &RefusedError{Reason: fmt.Sprintf("release %s has only revision %d; there is no earlier revision to roll back to", last.Name, last.Version)}
	}
	what := "revision " + strconv.Itoa(want)
	if want == last.Version {
		what += " is the latest"
	} else {
		what += " does not exist"
	}
	return nil, &InvalidError{Err: fmt.Errorf("toRevision: %s of release %s; its other revisions are %s", what, last.Name, strings.Join(others, ", "))}
}

// supportsCluster refuses an add-on version that does not support the cluster's version,
// unless force.
func (i *Installer) supportsCluster(addon string, force bool) error {
	v, err := i.ServerVersion()
	if err != nil {
		return fmt.Errorf("read the cluster's version: %w", err)
	}
	cv, err := versions.ParseClusterVersion(v)
	if err != nil {
		return err
	}
	if ok, _ := i.table.Supported(addon, cv); ok || force {
		return nil
	}
	return &RefusedError{Reason: i.table.Explain(addon, cv) + "; force goes back anyway (--force)"}
}
