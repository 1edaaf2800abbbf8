package installer

import (
	"context"
	"fmt"
	"io"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"

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
// cluster. The values are validated against the chart's schema first.
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
	cfg := &action.Configuration{
		Releases:     storage.Init(driver.NewMemory()),
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Capabilities: chartutil.DefaultCapabilities,
		Log:          func(string, ...any) {},
	}
	act := release.NewRender(cfg, release.Options{ReleaseName: o.ReleaseName, Namespace: o.Namespace, KubeVersion: parsed})
	rel, err := act.RunWithContext(ctx, p.chart, p.values)
	if err != nil {
		return "", fmt.Errorf("render: %w", err)
	}
	out := rel.Manifest
	for _, h := range rel.Hooks {
		out += "\n---\n# Source: " + h.Path + "\n" + h.Manifest + "\n"
	}
	return out, nil
}
