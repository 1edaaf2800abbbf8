package installer

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/chartutil"

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
	return renderChart(ctx, p.chart, p.values, o, parsed)
}
