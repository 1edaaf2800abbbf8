package installer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kruise-addon/kruise-addon/installer/bundle"
	"github.com/kruise-addon/kruise-addon/installer/chartsource"
)

// loadChart is the chart an install, upgrade or render uses: the bundle's (with its manifest),
// the override at ChartPath, or the embedded one. A bundle needs a registry, and the two
// choices of chart exclude each other.
func loadChart(o Options) (*chart.Chart, *bundle.Manifest, error) {
	var errs field.ErrorList
	switch {
	case o.Bundle != "" && o.ChartPath != "":
		errs = append(errs, field.Invalid(field.NewPath("chartPath"), o.ChartPath, "a bundle carries its own chart: give a bundle or a chart, not both"))
	case o.Bundle != "":
		errs = append(errs, o.Registry.Validate(field.NewPath("registry"))...)
	case o.Registry.Host != "":
		errs = append(errs, field.Required(field.NewPath("bundle"), "--registry mirrors a bundle's images: give the bundle it was pushed from with --bundle"))
	}
	if len(errs) > 0 {
		return nil, nil, &InvalidError{Err: errs.ToAggregate()}
	}
	if o.Bundle == "" {
		ch, err := chartsource.Load(o.ChartPath)
		return ch, nil, err
	}
	// Read verifies the whole bundle, every blob included, before its chart is used.
	b, err := bundle.Read(o.Bundle)
	if err != nil {
		return nil, nil, &InvalidError{Err: err}
	}
	if o.BundleKey != "" {
		if err := b.VerifySignature([]byte(o.BundleKey)); err != nil {
			return nil, nil, &InvalidError{Err: fmt.Errorf("bundleKey: %w", err)}
		}
	}
	return b.Chart, &b.Manifest, nil
}

// bundleLacks refuses values that run an image the bundle does not hold (the console API's
// with server.enabled, from a bundle created without --server), naming the image and the value,
// before anything is applied: it would otherwise run by tag from a mirror nobody checked.
func bundleLacks(ch *chart.Chart, m *bundle.Manifest, vals map[string]any) error {
	if m == nil {
		return nil
	}
	needs, err := bundle.Lacks(*m, ch, vals)
	if err != nil {
		return &InvalidError{Err: err}
	}
	if len(needs) == 0 {
		return nil
	}
	var named []string
	for _, n := range needs {
		named = append(named, fmt.Sprintf("%s (%s, which %s runs)", n.Image, n.Role, n.Value))
	}
	return &RefusedError{
		Reason: fmt.Sprintf("the bundle lacks %s: create it with `kruise-addon bundle create --server` from a layout that holds it (make images IMAGES=kruise-manager,kruise-daemon,kruise-addon), or leave %s unset",
			strings.Join(named, ", "), needs[0].Value),
		MissingImages: named,
	}
}

// verifyImages refuses an install or upgrade from a bundle whose images the registry lacks,
// naming each one, before anything is applied: the pods would otherwise never pull them.
func verifyImages(ctx context.Context, m *bundle.Manifest, o Options) error {
	if m == nil {
		return nil
	}
	err := bundle.Verify(ctx, *m, o.Registry)
	var missing *bundle.MissingError
	if errors.As(err, &missing) {
		return &RefusedError{Reason: missing.Error(), MissingImages: missing.Images}
	}
	if err != nil {
		return fmt.Errorf("check the bundle's images in registry %s: %w", o.Registry.Host, err)
	}
	return nil
}
