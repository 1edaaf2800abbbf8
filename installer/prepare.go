package installer

import (
	"fmt"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/kruise-addon/kruise-addon/installer/bundle"
	"github.com/kruise-addon/kruise-addon/installer/facts"
	"github.com/kruise-addon/kruise-addon/installer/placement"
)

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
	r, vals, err := valuesOf(o)
	if err != nil {
		return prepared{}, err
	}
	if b != nil {
		vals = merge(vals, bundle.Values(*b, o.Registry.Host))
	}
	if err := bundleLacks(ch, b, vals); err != nil {
		return prepared{}, err
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
