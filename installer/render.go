package installer

import (
	"context"
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/chartutil"

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
// values the schema accepts is bad input, and nothing was created.
func renderPrepared(ctx context.Context, p prepared, o Options, kv *chartutil.KubeVersion) (string, error) {
	act := release.NewRender(release.RenderConfig(), release.Options{ReleaseName: o.ReleaseName, Namespace: o.Namespace, KubeVersion: kv})
	rel, err := act.RunWithContext(ctx, p.chart, p.values)
	if err != nil {
		return "", &InvalidError{Err: fmt.Errorf("the chart does not render with these values: %w", err)}
	}
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
	return out.String(), nil
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
