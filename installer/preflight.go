package installer

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/kruise-addon/kruise-addon/installer/chartsource"
	"github.com/kruise-addon/kruise-addon/installer/facts"
	"github.com/kruise-addon/kruise-addon/installer/internal/await"
	"github.com/kruise-addon/kruise-addon/installer/preflight"
	"github.com/kruise-addon/kruise-addon/installer/spec"
	"github.com/kruise-addon/kruise-addon/versions"
)

// Facts collects the cluster facts. It returns as soon as ctx ends, even in the middle of a
// call that takes no context.
func (i *Installer) Facts(ctx context.Context) (facts.Facts, error) {
	return await.Read(ctx, "read the cluster's facts", func() (facts.Facts, error) {
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
	_, vals, err := valuesOf(o)
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
	r, vals, err := valuesOf(o)
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
