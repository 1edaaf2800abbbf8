package installer

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/chart"
	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/kruise-addon/kruise-addon/installer/bundle"
	"github.com/kruise-addon/kruise-addon/installer/facts"
	"github.com/kruise-addon/kruise-addon/installer/placement"
	"github.com/kruise-addon/kruise-addon/installer/preflight"
	"github.com/kruise-addon/kruise-addon/installer/release"
)

// Result describes the release after a command.
type Result struct {
	Release      string            `json:"release"`
	Namespace    string            `json:"namespace"`
	Revision     int               `json:"revision"`
	Status       string            `json:"status"`
	ChartVersion string            `json:"chartVersion"`
	AppVersion   string            `json:"appVersion"`
	Step         release.Step      `json:"step"`
	Message      string            `json:"message,omitempty"`
	Preflight    *preflight.Report `json:"preflight,omitempty"`
	// Webhook is the webhook as the command left it: the readiness wait covers the manager's
	// pods, and this says whether the manager has patched its CA into each configuration yet.
	Webhook *Webhook `json:"webhook,omitempty"`
}

func resultOf(r *helmrelease.Release, step release.Step) *Result {
	res := &Result{Release: r.Name, Namespace: r.Namespace, Revision: r.Version, Step: step}
	if r.Info != nil {
		res.Status = r.Info.Status.String()
	}
	if r.Chart != nil && r.Chart.Metadata != nil {
		res.ChartVersion, res.AppVersion = r.Chart.Metadata.Version, r.Chart.Metadata.AppVersion
	}
	return res
}

// prepared is everything an install or upgrade computed before touching the cluster.
type prepared struct {
	chart    *chart.Chart
	resolved resolved
	values   map[string]any
	// bundle is the air-gap bundle's manifest when installing from one.
	bundle *bundle.Manifest
}

// prepare validates the names, loads the chart, validates the choices and the values against
// the schema.
func prepare(o Options) (prepared, error) {
	if err := o.validate(); err != nil {
		return prepared{}, err
	}
	ch, b, err := loadChart(o)
	if err != nil {
		return prepared{}, err
	}
	r, err := resolve(o)
	if err != nil {
		return prepared{}, err
	}
	vals, err := buildValues(o, r)
	if err != nil {
		return prepared{}, err
	}
	if b != nil {
		vals = merge(vals, bundle.Values(*b, o.Registry.Host))
	}
	if err := validateSchema(ch, vals); err != nil {
		return prepared{}, err
	}
	if err := validateConfigNamespace(ch, vals, o.Namespace); err != nil {
		return prepared{}, err
	}
	if err := validateFeatureGates(ch, vals); err != nil {
		return prepared{}, err
	}
	return prepared{chart: ch, resolved: r, values: vals, bundle: b}, nil
}

// withDaemonExclusions adds preflight's daemon exclusions under the user's values.
func withDaemonExclusions(p prepared, o Options, exclude []string) (prepared, error) {
	if len(exclude) == 0 {
		return p, nil
	}
	pl := p.resolved.placement
	if pl == nil {
		d := o.Placement
		if d == nil {
			d = &placement.Options{}
		}
		cp := *d
		pl = &cp
	}
	pl.DaemonExcludeNodes = exclude
	p.resolved.placement = pl
	vals, err := buildValues(o, p.resolved)
	if err != nil {
		return p, err
	}
	p.values = vals
	return p, validateSchema(p.chart, vals)
}

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
// custom resource is deleted, and the error is a *RolledBackError that says so. With NoWait a
// failure leaves the release failed. An install that ends with no release gives its namespace
// back (giveBack). o.Timeout bounds the command; when ctx ends first (a signal) the install is
// undone too.
func (i *Installer) Install(ctx context.Context, o Options) (res *Result, err error) {
	o = o.withInstallDefaults()
	p, err := prepare(o)
	if err != nil {
		return nil, err
	}
	// Helm gets the caller's context (a signal), not the deadline: its own Timeout ends at the
	// same moment.
	helmCtx, cancelHelm := context.WithCancelCause(ctx)
	defer cancelHelm(nil)
	ctx, cancel := withDeadline(ctx, o.Timeout)
	defer cancel(nil)
	defer func() { err = stopped(ctx, err) }()
	if err := verifyImages(ctx, p, o); err != nil {
		return nil, err
	}
	lock, err := i.lockCluster(ctx, release.CmdInstall, o)
	if err != nil {
		return nil, err
	}
	defer lock.release()
	defer lock.onLost(cancel)()
	defer lock.onLost(cancelHelm)()
	store, _, d, err := i.openRelease(ctx, release.CmdInstall, o)
	if err != nil {
		return nil, err
	}
	if d.Step == release.StepRefuse {
		return nil, &RefusedError{Reason: d.Reason, Locked: d.Locked}
	}
	if d.Step == release.StepUpgrade {
		o.Timeout = remaining(ctx, o.Timeout)
		return i.upgrade(ctx, o, release.CmdInstall, lock)
	}
	f, err := i.factsFor(ctx, configNamespace(p.chart, p.values))
	if err != nil {
		return nil, err
	}
	if err := otherRelease(f, o); err != nil {
		return nil, err
	}
	pf := runPreflight(i.table, p.chart, o, p.resolved, f, p.values)
	if pf.Report.Refused() {
		return nil, &RefusedError{Preflight: &pf.Report}
	}
	if p, err = withDaemonExclusions(p, o, pf.Report.DaemonExcludeNodes); err != nil {
		return nil, err
	}
	manifest, err := renderForCluster(ctx, p, o, f.ServerVersion)
	if err != nil {
		return nil, err
	}
	ns, err := i.ensureNamespace(ctx, o.Namespace)
	if err != nil {
		return nil, err
	}
	failed := failedRun{cmd: release.CmdInstall, o: o, manifest: manifest, namespace: ns}
	if crdsManaged(p.values) {
		if err := i.adoptCRDs(ctx, o, pf.Report.CRDsToAdopt); err != nil {
			failed.cause = err
			return nil, i.undo(ctx, store, failed)
		}
	}
	helmTimeout := remaining(ctx, o.Timeout)
	act := release.NewInstall(store.Config(), release.Options{
		ReleaseName: o.ReleaseName, Namespace: o.Namespace, Timeout: helmTimeout, NoWait: o.NoWait,
	})
	// The chart's only hook is the pre-delete gate for plain helm users; the installer runs the
	// gate in Go. The hook is still stored with the release, so a later plain `helm uninstall`
	// runs it.
	act.DisableHooks = true
	var rel *helmrelease.Release
	err = i.withProgress(ctx, o.Namespace, readinessWait(o, helmTimeout), func() error {
		var err error
		rel, err = act.RunWithContext(helmCtx, p.chart, p.values)
		return err
	})
	if err != nil {
		failed.cause = err
		return nil, i.undo(ctx, store, failed)
	}
	res = resultOf(rel, release.StepInstall)
	res.Preflight = &pf.Report
	res.Webhook = i.webhookAfter(ctx, o)
	return res, nil
}

// otherRelease refuses a command on o's release while the cluster holds another release of the
// add-on, which runs once per cluster.
func otherRelease(f facts.Facts, o Options) error {
	for _, r := range f.Releases {
		if r.Namespace == o.Namespace && r.Name == o.ReleaseName {
			continue
		}
		return &RefusedError{
			Reason: fmt.Sprintf("the cluster has the add-on already: release %s/%s (%s, chart %s); the add-on runs once per cluster, so release %s/%s is refused: upgrade or uninstall release %s/%s instead (--namespace %s --release %s)",
				r.Namespace, r.Name, r.Status, r.ChartVersion, o.Namespace, o.ReleaseName, r.Namespace, r.Name, r.Namespace, r.Name),
			InUse: &InUse{Namespace: r.Namespace, Release: r.Name, State: r.Status},
		}
	}
	return nil
}

// webhookAfter is the webhook's state after a successful install or upgrade, nil when it cannot
// be read (the release is deployed; status reads it again).
func (i *Installer) webhookAfter(ctx context.Context, o Options) *Webhook {
	if o.NoWait {
		return nil
	}
	w, err := i.webhook(ctx, o.Namespace)
	if err != nil {
		return nil
	}
	return &w
}

// renderForCluster renders what an install or upgrade will apply, for the cluster's version,
// before anything is applied, and returns the manifest.
func renderForCluster(ctx context.Context, p prepared, o Options, serverVersion string) (string, error) {
	kv, err := clusterKubeVersion(serverVersion)
	if err != nil {
		return "", err
	}
	return renderPrepared(ctx, p, o, kv)
}
