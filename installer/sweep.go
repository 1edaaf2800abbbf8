package installer

import (
	"fmt"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/action"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/kruise-addon/kruise-addon/installer/facts"
	"github.com/kruise-addon/kruise-addon/installer/release"
)

// Sweep pacing: Helm's background creations take well under a second for the whole chart, so
// a few quiet passes a second apart see the last of them.
const (
	sweepInterval    = time.Second
	sweepQuietPasses = 3
	sweepMaxPasses   = 30
)

// sweepLeftovers deletes the objects of manifest that still carry the ownership of release
// o.ReleaseName in o.Namespace after that release was uninstalled, pass after pass until
// sweepQuietPasses passes in a row find none. Objects without that ownership (a user's, another
// release's) are never touched, and neither are CRDs, which the chart keeps on uninstall.
func sweepLeftovers(cfg *action.Configuration, o Options, manifest string, clk clock.Clock) error {
	if strings.TrimSpace(manifest) == "" {
		return nil
	}
	infos, err := cfg.KubeClient.Build(strings.NewReader(manifest), false)
	if err != nil {
		return fmt.Errorf("read the rendered objects: %w", err)
	}
	owner := facts.Owner{Release: o.ReleaseName, Namespace: o.Namespace}
	quiet := 0
	for pass := 0; pass < sweepMaxPasses && quiet < sweepQuietPasses; pass++ {
		if pass > 0 {
			clk.Sleep(sweepInterval)
		}
		found := 0
		for _, info := range infos {
			if info.Mapping.GroupVersionKind.Kind == "CustomResourceDefinition" {
				continue
			}
			d, _, err := release.DeleteIfOwned(info, owner, metav1.DeletePropagationBackground)
			if err != nil {
				return fmt.Errorf("remove what the failed install left: %w", err)
			}
			if d == release.Deleted {
				found++
			}
		}
		if found == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
	return nil
}
