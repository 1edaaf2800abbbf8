package installer

import (
	"context"
	"time"

	"fmt"

	"helm.sh/helm/v3/pkg/chart"

	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/kruise-addon/kruise-addon/installer/crds"
	"github.com/kruise-addon/kruise-addon/installer/facts"
	"github.com/kruise-addon/kruise-addon/installer/release"
	"github.com/kruise-addon/kruise-addon/versions"
)

// Install installs the add-on: validate, take the cluster's lock, preflight, render, label the
// namespace, then a Helm install that waits for the manager and the daemon. Everything is
// rendered client-side for the cluster's version before anything is applied, so bad input
// changes nothing. A failed earlier install is repaired with an upgrade; a stuck release is
// refused until unlocked. The add-on runs once per cluster: while another release of it exists,
// or another command holds the cluster's lock (lock.go), the install is refused with a
// *RefusedError whose InUse names that release and its state, before anything is applied.
//
// An install that fails, Helm's failure or the add-on not ready within o.Timeout alike, is
// rolled back to nothing (see undo): the release is uninstalled, the CRDs are kept and no
// custom resource is deleted, and the error is a *RolledBackError that says so. Without Wait a
// failure leaves the release failed. An install that ends with no release gives its namespace
// back (giveBack). o.Timeout bounds the command; when ctx ends first (a signal) the install is
// undone too.
func (i *Installer) Install(ctx context.Context, o Options) (*Result, error) {
	return i.apply(ctx, release.CmdInstall, o.withInstallDefaults())
}

// Upgrade upgrades the release: validate, check the upgrade path, preflight, render, apply the
// CRDs server-side, then a Helm upgrade that reuses the previous values over the new chart's
// defaults (unless ResetValues). Everything is rendered client-side for the cluster's version
// before anything is applied. An upgrade that fails, Helm's failure or the add-on not ready
// within o.Timeout alike, is rolled back to the last deployed revision (see undo) and returns a
// *RolledBackError; the release is never left pending.
//
// o.Timeout bounds the whole command; when it passes or ctx ends while Helm is applying, the
// upgrade is rolled back, and that rollback may wait up to o.Timeout again.
//
// With o.Install, an upgrade of a release that is not installed is an install, as Helm's
// `upgrade --install`.
func (i *Installer) Upgrade(ctx context.Context, o Options) (*Result, error) {
	if o.Install {
		_, last, _, err := i.openRelease(ctx, release.CmdStatus, o.withDefaults())
		if err != nil {
			return nil, err
		}
		if s := release.StateOf(last); s == release.Absent || s == release.Other {
			return i.Install(ctx, o)
		}
	}
	return i.apply(ctx, release.CmdUpgrade, o.withDefaults())
}

// applySteps is the one sequence of an install and an upgrade, in order. A step with only set
// runs only when the release's state decided that Helm action; a step whose name an action's
// undoFrom names, and every later one, undo the command when they fail (recover.go).
var applySteps = []applyStep{
	{name: "check the bundle's images", run: (*applyRun).verifyImages},
	{name: "take the cluster's lock", run: (*applyRun).lock},
	{name: "read the release", run: (*applyRun).openRelease},
	{name: "check the upgrade path", run: (*applyRun).checkUpgradePath, only: release.StepUpgrade},
	{name: "reuse the previous values", run: (*applyRun).reuseValues, only: release.StepUpgrade},
	{name: "read the cluster's facts", run: (*applyRun).readFacts},
	{name: "preflight", run: (*applyRun).preflight},
	{name: "render for the cluster", run: (*applyRun).render},
	{name: "label the namespace", run: (*applyRun).namespace},
	{name: "check with the apiserver", run: (*applyRun).dryRun},
	{name: "adopt the CRDs", run: (*applyRun).adoptCRDs},
	{name: "apply the CRDs", run: (*applyRun).applyCRDs, only: release.StepUpgrade},
	{name: "run the Helm action", run: (*applyRun).helm},
}

// helmActions are the differences between an install and an upgrade, as data: the steps
// above are the same list for both.
var helmActions = map[release.Step]helmAction{
	release.StepInstall: {undoFrom: "check with the apiserver", givesBackNamespace: true, run: (*applyRun).helmInstall},
	release.StepUpgrade: {undoFrom: "run the Helm action", undoesToLast: true, run: (*applyRun).helmUpgrade},
}

// applyStep is one step of applySteps.
type applyStep struct {
	name string
	run  func(*applyRun) error
	// only, when set, is the Helm action the step belongs to.
	only release.Step
}

// helmAction is what tells one Helm action from the other.
type helmAction struct {
	// undoFrom names the first step whose failure undoes the command: an install undoes what
	// it did to the namespace and the CRDs' ownership, an upgrade only a failed Helm action.
	undoFrom string
	// givesBackNamespace: what the namespace step did is given back when no release remains.
	givesBackNamespace bool
	// undoesToLast: a failure goes back to the revision the command started from; an
	// install's goes back to nothing.
	undoesToLast bool
	// run is the Helm action itself.
	run func(*applyRun) (*helmrelease.Release, error)
}

// applyRun is one install or upgrade as it goes: what the steps read, and what each leaves
// for the next.
type applyRun struct {
	i   *Installer
	cmd release.Command
	o   Options
	p   prepared
	// ctx carries the command's deadline; helmCtx only the caller's cancellation (a signal),
	// since Helm's own Timeout ends at the same moment.
	ctx, helmCtx context.Context
	cancel       context.CancelCauseFunc
	cancelHelm   context.CancelCauseFunc
	store        *release.Store
	last         *helmrelease.Release
	// step is the Helm action the release's state decided: install, or upgrade (an install
	// repairs a failed release with an upgrade).
	step release.Step
	// values are those Helm will use: the previous ones under this command's on an upgrade,
	// unless ResetValues.
	values   map[string]any
	facts    facts.Facts
	pf       PreflightResult
	manifest string
	ns       namespaceChange
	// helmTimeout is what was left of the command's time when the Helm action started.
	helmTimeout time.Duration
	rel         *helmrelease.Release
	// released are run in reverse when the command ends: the lock's.
	released []func()
}

// apply runs applySteps for cmd.
func (i *Installer) apply(ctx context.Context, cmd release.Command, o Options) (res *Result, err error) {
	p, err := prepare(o)
	if err != nil {
		return nil, err
	}
	r := &applyRun{i: i, cmd: cmd, o: o, p: p}
	r.helmCtx, r.cancelHelm = context.WithCancelCause(ctx)
	defer r.cancelHelm(nil)
	r.ctx, r.cancel = withDeadline(ctx, o.Timeout)
	defer r.cancel(nil)
	defer func() { err = stopped(r.ctx, err) }()
	defer func() {
		for k := len(r.released) - 1; k >= 0; k-- {
			r.released[k]()
		}
	}()
	undoing := false
	for _, s := range applySteps {
		if s.only != "" && s.only != r.step {
			continue
		}
		undoing = undoing || s.name == helmActions[r.step].undoFrom
		if err := s.run(r); err != nil {
			if undoing {
				return nil, r.undo(err)
			}
			return nil, err
		}
	}
	res = resultOf(r.rel, r.step)
	res.Preflight = &r.pf.Report
	res.Webhook = i.webhookAfter(r.ctx, r.o)
	return res, nil
}

func (r *applyRun) verifyImages() error { return verifyImages(r.ctx, r.p.bundle, r.o) }

// lock takes the cluster's lock, and ends the command when the lock is lost.
func (r *applyRun) lock() error {
	l, err := r.i.lockCluster(r.ctx, r.cmd, r.o)
	if err != nil {
		return err
	}
	r.released = append(r.released, l.release, l.onLost(r.cancel), l.onLost(r.cancelHelm))
	return nil
}

// openRelease reads the release and decides the Helm action from its state.
func (r *applyRun) openRelease() error {
	store, last, d, err := r.i.openRelease(r.ctx, r.cmd, r.o)
	if err != nil {
		return err
	}
	if d.Step == release.StepRefuse {
		return &RefusedError{Reason: d.Reason, Locked: d.Locked}
	}
	r.store, r.last, r.step, r.values = store, last, d.Step, r.p.values
	if r.cmd == release.CmdInstall && d.Step == release.StepUpgrade {
		// The repairing upgrade's rollback has what is left of the install's time.
		r.o.Timeout = remaining(r.ctx, r.o.Timeout)
	}
	return nil
}

// checkUpgradePath refuses an upgrade the version table does not allow (unless Force).
func (r *applyRun) checkUpgradePath() error {
	if err := upgradePath(r.i.table, r.last.Chart.Metadata, r.p.chart.Metadata.AppVersion, r.o.Force); err != nil {
		return &RefusedError{Reason: err.Error()}
	}
	return nil
}

// upgradePath checks the path from the release's chart to the add-on version to: between
// add-on versions by the table's rows, and from a release of the community chart (taken over
// under its release name) by the community path rules (versions.CheckTakeover).
func upgradePath(t *versions.Table, from *chart.Metadata, to string, force bool) error {
	opts := versions.UpgradeOptions{Force: force}
	if isCommunityChart(from) {
		return t.CheckTakeover(from.AppVersion, to, opts)
	}
	return t.CheckUpgrade(from.AppVersion, to, opts)
}

// communityHome is the home every release of the community chart names; ours names none.
const communityHome = "https://openkruise.io"

// isCommunityChart tells the community chart from ours: both are called kruise.
func isCommunityChart(m *chart.Metadata) bool {
	return m != nil && m.Home == communityHome
}

// reuseValues puts the release's previous values under this command's, unless ResetValues,
// and checks them as prepare checked this command's alone.
func (r *applyRun) reuseValues() error {
	if !r.o.ResetValues {
		r.values = merge(r.last.Config, r.p.values)
	}
	if err := validateConfigNamespace(r.p.chart, r.values, r.o.Namespace); err != nil {
		return err
	}
	return validateFeatureGates(r.p.chart, r.values)
}

// readFacts reads the cluster, and refuses while another release of the add-on exists. A
// daemon config namespace still terminating (an uninstall just before) is waited for, within
// the command's time, before preflight judges it.
func (r *applyRun) readFacts() error {
	cns := configNamespace(r.p.chart, r.values)
	f, err := r.i.factsFor(r.ctx, cns)
	if err != nil {
		return err
	}
	if ns, ok := f.Namespace(cns); ok && ns.Terminating {
		fmt.Fprintf(r.i.progress, "waiting for namespace %s to finish terminating\n", cns)
		if r.i.waitNamespaceGone(r.ctx, cns) == nil {
			// Only the namespace changed: read it again, not the whole cluster.
			if f.Namespaces, err = facts.CollectNamespaces(r.ctx, r.i.kube, cns); err != nil {
				return err
			}
		}
	}
	r.facts = f
	return otherRelease(f, r.o)
}

// preflight runs every check, and keeps the daemon off the nodes preflight excludes.
func (r *applyRun) preflight() error {
	r.pf = runPreflight(r.i.table, r.p.chart, r.o, r.p.resolved, r.facts, r.values)
	if r.pf.Report.Refused() {
		return &RefusedError{Preflight: &r.pf.Report}
	}
	p, err := withDaemonExclusions(r.p, r.o, r.pf.Report.DaemonExcludeNodes)
	if err != nil {
		return err
	}
	r.p = p
	return nil
}

// render renders, for the cluster's version, the values Helm will use.
func (r *applyRun) render() error {
	effective := r.p.values
	if r.step == release.StepUpgrade && !r.o.ResetValues {
		effective = merge(r.last.Config, r.p.values)
	}
	kv, err := clusterKubeVersion(r.facts.ServerVersion)
	if err != nil {
		return err
	}
	r.manifest, err = renderChart(r.ctx, r.p.chart, effective, r.o, kv)
	return err
}

// namespace creates or labels the namespace before any webhook exists.
func (r *applyRun) namespace() error {
	ns, err := r.i.ensureNamespace(r.ctx, r.o.Namespace)
	if helmActions[r.step].givesBackNamespace {
		r.ns = ns
	}
	return err
}

// dryRun has the apiserver check every object the Helm action would apply (dryrun.go).
func (r *applyRun) dryRun() error { return dryRunManifest(r.ctx, r.store.Config(), r.manifest) }

func (r *applyRun) adoptCRDs() error {
	if !crds.Managed(r.values) {
		return nil
	}
	return crds.Adopt(r.ctx, r.i.metadata, facts.Owner{Release: r.o.ReleaseName, Namespace: r.o.Namespace}, r.pf.Report.CRDsToAdopt)
}

func (r *applyRun) applyCRDs() error {
	if !crds.Managed(r.values) {
		return nil
	}
	return crds.Apply(r.ctx, r.i.dynamic, r.p.chart)
}

// helm runs the Helm action the state decided, with the time left, while it reports progress
// and then waits for every component to be ready.
func (r *applyRun) helm() error {
	r.helmTimeout = remaining(r.ctx, r.o.Timeout)
	return r.i.withProgress(r.ctx, r.o.Namespace, readinessWait(r.o, r.helmTimeout), func() error {
		var err error
		r.rel, err = helmActions[r.step].run(r)
		return err
	})
}

// helmInstall is Helm's install. The chart's only hook is the pre-delete gate for plain helm
// users; the installer runs the gate in Go. The hook is still stored with the release, so a
// later plain `helm uninstall` runs it.
func (r *applyRun) helmInstall() (*helmrelease.Release, error) {
	act := release.NewInstall(r.store.Config(), r.helmOptions())
	act.DisableHooks = true
	return act.RunWithContext(r.helmCtx, r.p.chart, r.p.values)
}

// helmUpgrade is Helm's upgrade; Helm itself puts the previous values under p.values.
func (r *applyRun) helmUpgrade() (*helmrelease.Release, error) {
	act := release.NewUpgrade(r.store.Config(), r.helmOptions())
	return act.RunWithContext(r.helmCtx, r.o.ReleaseName, r.p.chart, r.p.values)
}

func (r *applyRun) helmOptions() release.Options {
	return release.Options{
		ReleaseName: r.o.ReleaseName, Namespace: r.o.Namespace, Timeout: r.helmTimeout, Wait: r.o.waits(),
		ResetValues: r.o.ResetValues, Force: r.o.Force,
	}
}

// undo undoes the command after its step failed with cause (recover.go).
func (r *applyRun) undo(cause error) error {
	f := failedRun{cmd: r.cmd, o: r.o, manifest: r.manifest, namespace: r.ns, cause: cause}
	if helmActions[r.step].undoesToLast {
		f.before = r.last.Version
	}
	return r.i.undo(r.ctx, r.store, f)
}

// webhookAfter is the webhook's state after a successful install or upgrade, nil when it cannot
// be read (the release is deployed; status reads it again).
func (i *Installer) webhookAfter(ctx context.Context, o Options) *Webhook {
	if !o.waits() {
		return nil
	}
	w, err := i.webhook(ctx, o.Namespace)
	if err != nil {
		return nil
	}
	return &w
}
