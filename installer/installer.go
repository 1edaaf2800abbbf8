package installer

import (
	"context"
	"fmt"
	"io"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	helmrelease "helm.sh/helm/v3/pkg/release"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/utils/clock"

	"github.com/kruise-addon/kruise-addon/installer/chartsource"
	"github.com/kruise-addon/kruise-addon/installer/facts"
	"github.com/kruise-addon/kruise-addon/installer/preflight"
	"github.com/kruise-addon/kruise-addon/installer/release"
	"github.com/kruise-addon/kruise-addon/installer/spec"
	"github.com/kruise-addon/kruise-addon/versions"
)

// Installer runs the commands against one cluster.
type Installer struct {
	getter   genericclioptions.RESTClientGetter
	kube     kubernetes.Interface
	dynamic  dynamic.Interface
	metadata metadata.Interface
	table    *versions.Table
	progress io.Writer
	// onReadiness, when set, receives each readiness change instead of its line on progress.
	onReadiness func(Readiness)
	debug       action.DebugLog
	clock       clock.WithTicker
}

// Option configures New.
type Option func(*Installer)

// WithProgress receives progress lines ("ready 1/2: manager 0/1, daemon 2/2"); default discards.
func WithProgress(w io.Writer) Option { return func(i *Installer) { i.progress = w } }

// WithReadiness receives each change of readiness while a command waits, and the readiness it
// ends with, as a value instead of a line on the progress writer; other progress lines (a
// rollback starting) still go to the writer. f is called from the command's goroutines, one
// call at a time.
func WithReadiness(f func(Readiness)) Option { return func(i *Installer) { i.onReadiness = f } }

// WithDebugLog receives Helm's debug log.
func WithDebugLog(l action.DebugLog) Option { return func(i *Installer) { i.debug = l } }

// WithClock drives the progress ticker.
func WithClock(c clock.WithTicker) Option { return func(i *Installer) { i.clock = c } }

// New connects to the cluster getter points at. Every request, ours and Helm's, gets the
// getter's timeout, or DefaultRequestTimeout when it sets none.
func New(getter genericclioptions.RESTClientGetter, opts ...Option) (*Installer, error) {
	getter = newBoundedGetter(getter, DefaultRequestTimeout)
	i := &Installer{getter: getter, progress: io.Discard, debug: func(string, ...any) {}, clock: clock.RealClock{}}
	for _, o := range opts {
		o(i)
	}
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	if i.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	if i.dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	if i.metadata, err = metadata.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("metadata client: %w", err)
	}
	if i.table, err = versions.Load(); err != nil {
		return nil, err
	}
	return i, nil
}

// openRelease is how every command starts: it opens the release storage of o.Namespace, reads
// the latest revision of o.ReleaseName, and decides what cmd does from its state.
func (i *Installer) openRelease(ctx context.Context, cmd release.Command, o Options) (*release.Store, *helmrelease.Release, release.Decision, error) {
	store, err := release.Open(i.getter, o.Namespace, i.debug)
	if err != nil {
		return nil, nil, release.Decision{}, err
	}
	last, err := store.Last(ctx, o.ReleaseName)
	if err != nil {
		return nil, nil, release.Decision{}, err
	}
	return store, last, release.Decide(cmd, release.StateOf(last), o.ReleaseName), nil
}

// await runs f, a read that takes no context (Helm's release storage, discovery), and returns
// as soon as ctx ends; f then finishes on its own within the request timeout and its result is
// dropped. Only for reads: nothing is left half-done when a read is abandoned. what names the
// read in the error.
func await[T any](ctx context.Context, what string, f func() (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, fmt.Errorf("%s: %w", what, context.Cause(ctx))
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		return zero, fmt.Errorf("%s: %w", what, context.Cause(ctx))
	}
}

// Facts collects the cluster facts. It returns as soon as ctx ends, even in the middle of a
// call that takes no context.
func (i *Installer) Facts(ctx context.Context) (facts.Facts, error) {
	return await(ctx, "read the cluster's facts", func() (facts.Facts, error) {
		return facts.Collect(ctx, facts.Clients{Kube: i.kube, Metadata: i.metadata})
	})
}

// factsFor collects the facts, and which of namespaces (those the chart would create) exist.
func (i *Installer) factsFor(ctx context.Context, namespaces ...string) (facts.Facts, error) {
	f, err := i.Facts(ctx)
	if err != nil {
		return f, err
	}
	if f.Namespaces, err = facts.CollectNamespaces(ctx, i.kube, namespaces...); err != nil {
		return f, err
	}
	return f, nil
}

// PreflightResult is the outcome of a preflight run.
type PreflightResult struct {
	AddonVersion string           `json:"addonVersion"`
	Recommended  spec.Preset      `json:"recommendedSpec"`
	Report       preflight.Report `json:"report"`
}

// Preflight collects facts and runs every check for the options, without changing anything.
func (i *Installer) Preflight(ctx context.Context, o Options) (PreflightResult, error) {
	if err := o.withDefaults().validate(); err != nil {
		return PreflightResult{}, err
	}
	f, err := i.factsFor(ctx, preflightConfigNamespace(o))
	if err != nil {
		return PreflightResult{}, err
	}
	return PreflightFacts(o, f)
}

// preflightConfigNamespace is the daemon config namespace o's values choose, "" when the chart
// or the values do not load (PreflightFacts then reports why).
func preflightConfigNamespace(o Options) string {
	o = o.withDefaults()
	ch, err := chartsource.Load(o.ChartPath)
	if err != nil {
		return ""
	}
	r, err := resolve(o)
	if err != nil {
		return ""
	}
	vals, err := buildValues(o, r)
	if err != nil {
		return ""
	}
	return configNamespace(ch, vals)
}

// PreflightFacts runs every check on facts already collected (or made up), with no cluster.
func PreflightFacts(o Options, f facts.Facts) (PreflightResult, error) {
	o = o.withDefaults()
	if o.Spec == nil {
		o.Spec = &SpecChoice{Preset: spec.Small}
	}
	ch, err := chartsource.Load(o.ChartPath)
	if err != nil {
		return PreflightResult{}, err
	}
	r, err := resolve(o)
	if err != nil {
		return PreflightResult{}, err
	}
	vals, err := buildValues(o, r)
	if err != nil {
		return PreflightResult{}, err
	}
	t, err := versions.Load()
	if err != nil {
		return PreflightResult{}, err
	}
	return runPreflight(t, ch, o, r, f, vals), nil
}

func runPreflight(table *versions.Table, ch *chart.Chart, o Options, r resolved, f facts.Facts, current map[string]any) PreflightResult {
	version := o.AddonVersion
	if version == "" {
		version = ch.Metadata.AppVersion
	}
	in := preflight.Input{
		Facts: f, Table: table, AddonVersion: version,
		ReleaseName: o.ReleaseName, Namespace: o.Namespace,
		ExcludeUnsupportedNodes: o.ExcludeUnsupportedNodes,
		PodFailurePolicy:        "Ignore",
		Wait:                    o.waits(),
		ConfigNamespace:         configNamespace(ch, current),
	}
	if r.spec != nil {
		in.Spec = *r.spec
	} else {
		in.Spec, _ = spec.For(spec.Small, spec.Overrides{})
		if n, ok := lookup(current, "manager", "replicas"); ok {
			if v, ok := asInt(n); ok {
				in.Spec.Replicas = int32(v)
			}
		}
	}
	if r.placement != nil {
		in.Placement = *r.placement
	}
	if v, ok := lookup(current, "webhookConfiguration", "failurePolicy", "pods"); ok {
		in.PodFailurePolicy = fmt.Sprint(v)
	}
	return PreflightResult{AddonVersion: version, Recommended: spec.Recommend(f.NodeCount()), Report: preflight.Run(in)}
}

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		return int64(n), true
	}
	return 0, false
}
