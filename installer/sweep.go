package installer

import (
	"fmt"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/action"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/utils/clock"

	"github.com/kruise-addon/kruise-addon/installer/facts"
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
			deleted, err := deleteIfOwned(info, o)
			if err != nil {
				return err
			}
			if deleted {
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

// deleteIfOwned deletes info's object when it exists and carries the release's ownership.
func deleteIfOwned(info *resource.Info, o Options) (bool, error) {
	h := resource.NewHelper(info.Client, info.Mapping)
	live, err := h.Get(info.Namespace, info.Name)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get %s %s: %w", info.Mapping.GroupVersionKind.Kind, info.Name, err)
	}
	acc, err := meta.Accessor(live)
	if err != nil {
		return false, err
	}
	if acc.GetDeletionTimestamp() != nil {
		return false, nil
	}
	ann := acc.GetAnnotations()
	if ann[facts.AnnotationReleaseName] != o.ReleaseName || ann[facts.AnnotationReleaseNamespace] != o.Namespace {
		return false, nil
	}
	if _, err := h.Delete(info.Namespace, info.Name); err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("delete %s %s left by the failed install: %w", info.Mapping.GroupVersionKind.Kind, info.Name, err)
	}
	return true, nil
}
