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

// renderChart renders ch with vals for a cluster of version kv, client-side:
// install and upgrade call it before they apply anything, so that a template that fails on
// values the schema accepts is bad input, and nothing was created. It returns the bytes Helm's
// client-only install returns; the CRD specs skip Helm's sorter (render_crds.go), and a render
// that fails that way, or whose placeholders did not come back, is done again as it is.
func renderChart(ctx context.Context, ch *chart.Chart, vals map[string]any, o Options, kv *chartutil.KubeVersion) (string, error) {
	if without, specs := withoutCRDSpecs(ch); specs != nil {
		if rel, err := helmRender(ctx, without, vals, o, kv); err == nil {
			if manifest, ok := specs.putBack(rel.Manifest); ok {
				rel.Manifest = manifest
				return withHooks(rel), nil
			}
		}
	}
	rel, err := helmRender(ctx, ch, vals, o, kv)
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
