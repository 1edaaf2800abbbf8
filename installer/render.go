package installer

import (
	"context"
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/kruise-addon/kruise-addon/installer/release"
	"github.com/kruise-addon/kruise-addon/versions"
)

// RenderOptions are Options plus the cluster version to render for.
type RenderOptions struct {
	Options
	// KubeVersion is the cluster version, e.g. v1.30.4-eks-a1b2c3; default: the newest minor
	// the add-on supports. Helm would otherwise assume v1.20.
	KubeVersion string `json:"kubeVersion,omitempty"`
}

// DefaultKubeVersion is the newest cluster minor the current add-on supports, as vX.Y.0.
func DefaultKubeVersion() string {
	minors := versions.Current().Minors()
	if len(minors) == 0 {
		return "v1.37.0"
	}
	return fmt.Sprintf("v1.%d.0", minors[len(minors)-1])
}

// Render renders the chart client-side, with the same values install would apply, without a
// cluster. The values are validated against the chart's schema first; a template that fails is
// bad input too.
func Render(ctx context.Context, ro RenderOptions) (string, error) {
	o := ro.Options.withInstallDefaults()
	p, err := prepare(o)
	if err != nil {
		return "", err
	}
	kv := ro.KubeVersion
	if kv == "" {
		kv = DefaultKubeVersion()
	}
	parsed, err := chartutil.ParseKubeVersion(kv)
	if err != nil {
		return "", invalid("kube version %q: %v", kv, err)
	}
	return renderPrepared(ctx, p, o, parsed)
}

// renderPrepared renders the chart with p's values for a cluster of version kv, client-side:
// install and upgrade call it before they apply anything, so that a template that fails on
// values the schema accepts is bad input, and nothing was created. It returns the bytes Helm's
// client-only install returns; the CRD specs skip Helm's sorter (render_crds.go), and a render
// that fails that way, or whose placeholders did not come back, is done again as it is.
func renderPrepared(ctx context.Context, p prepared, o Options, kv *chartutil.KubeVersion) (string, error) {
	if ch, specs := withoutCRDSpecs(p.chart); specs != nil {
		if rel, err := helmRender(ctx, ch, p.values, o, kv); err == nil {
			if manifest, ok := specs.putBack(rel.Manifest); ok {
				rel.Manifest = manifest
				return withHooks(rel), nil
			}
		}
	}
	rel, err := helmRender(ctx, p.chart, p.values, o, kv)
	if err != nil {
		return "", &InvalidError{Err: fmt.Errorf("the chart does not render with these values: %w", err)}
	}
	return withHooks(rel), nil
}

// helmRender is Helm's client-only install of ch.
func helmRender(ctx context.Context, ch *chart.Chart, vals map[string]any, o Options, kv *chartutil.KubeVersion) (*helmrelease.Release, error) {
	act := release.NewRender(release.RenderConfig(), release.Options{ReleaseName: o.ReleaseName, Namespace: o.Namespace, KubeVersion: kv})
	return act.RunWithContext(ctx, ch, vals)
}

// withHooks is the release's manifest followed by its hooks, as `helm template` prints them.
func withHooks(rel *helmrelease.Release) string {
	// One buffer: appending each hook to a string copied the whole manifest, CRDs and all, once
	// per hook.
	var out strings.Builder
	n := len(rel.Manifest)
	for _, h := range rel.Hooks {
		n += len(h.Path) + len(h.Manifest) + 20
	}
	out.Grow(n)
	out.WriteString(rel.Manifest)
	for _, h := range rel.Hooks {
		out.WriteString("\n---\n# Source: " + h.Path + "\n" + h.Manifest + "\n")
	}
	return out.String()
}

// clusterKubeVersion is the version to render for, from the apiserver's gitVersion. Cloud
// strings Helm cannot parse (such as 1.28+) fall back to their minor.
func clusterKubeVersion(gitVersion string) (*chartutil.KubeVersion, error) {
	if kv, err := chartutil.ParseKubeVersion(gitVersion); err == nil {
		return kv, nil
	}
	cv, err := versions.ParseClusterVersion(gitVersion)
	if err != nil {
		return nil, fmt.Errorf("cluster version %q: %w", gitVersion, err)
	}
	return chartutil.ParseKubeVersion(fmt.Sprintf("v%d.%d.0", cv.Major, cv.Minor))
}
