package installer

import (
	"context"
	"fmt"

	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/kruise-addon/kruise-addon/installer/release"
)

// failedRun is an install or upgrade whose Helm action or readiness wait failed.
type failedRun struct {
	cmd release.Command
	o   Options
	// before is the revision the command started from; 0 for a fresh install.
	before int
	// manifest is what the command rendered; the objects of it that still carry the release's
	// ownership after an uninstall are removed.
	manifest string
	// namespace is what an install did to its namespace, given back when no release remains.
	namespace namespaceChange
	cause     error
}

// undo makes the failure a release state and undoes it as release.Recover decides, then
// returns the error the command reports, saying where the release ended up.
//
// Helm's own failure (its wait, a timeout, a cancel) has already recorded the revision failed;
// a revision Helm deployed while the add-on did not become ready, or one a cancel left pending,
// is marked failed here, so both failures are one state. The rollback or uninstall then runs
// even when ctx has ended (it is what a timeout or a signal asks for), bounded by Helm's own
// timeout of o.Timeout.
func (i *Installer) undo(ctx context.Context, store *release.Store, f failedRun) error {
	ctx = context.WithoutCancel(ctx)
	name := f.o.ReleaseName
	latest, err := store.Last(ctx, name)
	if err != nil {
		return fmt.Errorf("%s %s: %w; and reading the release afterwards failed: %w", f.cmd, name, f.cause, err)
	}
	var ours *helmrelease.Release
	if latest != nil && latest.Version > f.before {
		ours = latest
	}
	if s := release.StateOf(ours); s == release.Deployed || s == release.Pending {
		if err := store.MarkFailed(ours, fmt.Sprintf("%s failed: %v", f.cmd, f.cause)); err != nil {
			return fmt.Errorf("%s %s: %w; and %w", f.cmd, name, f.cause, err)
		}
	}
	good := 0
	if f.before > 0 {
		if good, err = store.LastGood(name, f.before); err != nil {
			return fmt.Errorf("%s %s: %w; and %w", f.cmd, name, f.cause, err)
		}
	}
	d := release.Recover(release.Failure{Cmd: f.cmd, State: release.StateOf(ours), LastGood: good, Wait: f.o.waits()}, name)
	switch d.Step {
	case release.StepRollback:
		fmt.Fprintf(i.progress, "%s failed (%v); rolling back to revision %d\n", f.cmd, f.cause, d.Revision)
		rb := release.NewRollback(store.Config(), release.Options{Timeout: f.o.Timeout}, d.Revision)
		if err := rb.Run(name); err != nil {
			return fmt.Errorf("%s %s: %w; and the rollback to revision %d failed: %w", f.cmd, name, f.cause, d.Revision, err)
		}
		after, err := store.Last(ctx, name)
		if err != nil || after == nil {
			return fmt.Errorf("%s %s: %w (rolled back to revision %d)", f.cmd, name, f.cause, d.Revision)
		}
		return &RolledBackError{Command: string(f.cmd), Release: name, Revision: d.Revision, Current: after.Version, Err: f.cause}
	case release.StepUninstall:
		fmt.Fprintf(i.progress, "%s failed (%v); uninstalling release %s\n", f.cmd, f.cause, name)
		un := release.NewUninstall(store.Config(), release.Options{ReleaseName: name, Namespace: f.o.Namespace, Timeout: f.o.Timeout, Wait: true})
		if _, err := un.Run(name); err != nil {
			return fmt.Errorf("%s %s: %w; and uninstalling it again failed: %w", f.cmd, name, f.cause, err)
		}
		rb := &RolledBackError{Command: string(f.cmd), Release: name, Uninstalled: true, Kept: un.Kept(), Err: f.cause}
		// A cancelled Helm action goes on creating objects in the background for a moment.
		if err := sweepLeftovers(store.Config(), f.o, f.manifest, i.clock); err != nil {
			return fmt.Errorf("%w; and removing what it left failed: %w", rb, err)
		}
		back, err := i.giveBack(ctx, f.namespace, f.o)
		rb.Namespace = back.describe(f.o.Namespace)
		if back.Deleted {
			rb.DeletedNamespace = f.o.Namespace
		}
		if err != nil {
			return fmt.Errorf("%w; and %w", rb, err)
		}
		return rb
	}
	if ours == nil {
		// Nothing was stored (Helm refused before it began, or the install failed before Helm):
		// no release to undo, but the namespace the install prepared goes back as it was.
		back, err := i.giveBack(ctx, f.namespace, f.o)
		msg := fmt.Errorf("%s %s: %w", f.cmd, name, f.cause)
		if note := back.describe(f.o.Namespace); note != "" {
			msg = fmt.Errorf("%w; %s", msg, note)
		}
		if err != nil {
			return fmt.Errorf("%w; and %w", msg, err)
		}
		return msg
	}
	return fmt.Errorf("%s %s: %w (release now failed at revision %d: %s)", f.cmd, name, f.cause, ours.Version, d.Reason)
}
