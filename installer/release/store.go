package release

import (
	"context"
	"errors"
	"fmt"

	"github.com/kruise-addon/kruise-addon/installer/internal/await"
	"helm.sh/helm/v3/pkg/action"
	helmrelease "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Store is the Helm release storage of one namespace (Secrets), with the Helm configuration the
// actions run on. Every command opens it once with Open; nothing else reads or writes releases.
type Store struct {
	cfg *action.Configuration
}

// Open opens the release storage of namespace. Helm's objects without a namespace go to
// namespace too, whatever the kubeconfig's context says.
func Open(getter genericclioptions.RESTClientGetter, namespace string, log action.DebugLog) (*Store, error) {
	if log == nil {
		log = func(string, ...any) {}
	}
	cfg := &action.Configuration{}
	if err := cfg.Init(WithNamespace(getter, namespace), namespace, "secret", log); err != nil {
		return nil, fmt.Errorf("helm: %w", err)
	}
	return &Store{cfg: cfg}, nil
}

// Config is the Helm configuration the actions (NewInstall, NewUpgrade, ...) run on.
func (s *Store) Config() *action.Configuration { return s.cfg }

// Last returns the latest revision of name, nil when there is none. It returns as soon as ctx
// ends: Helm's storage takes no context, and the read then finishes on its own within the
// client's request timeout, its result dropped.
func (s *Store) Last(ctx context.Context, name string) (*helmrelease.Release, error) {
	return await.Read(ctx, "read release "+name, func() (*helmrelease.Release, error) { return s.last(name) })
}

func (s *Store) last(name string) (*helmrelease.Release, error) {
	r, err := s.cfg.Releases.Last(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read release %s: %w", name, err)
	}
	return r, nil
}

// LastGood is the newest revision of name, at most upTo, that was deployed (deployed or
// superseded): what a failed upgrade goes back to. 0 when there is none.
func (s *Store) LastGood(name string, upTo int) (int, error) {
	hist, err := s.cfg.Releases.History(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the history of release %s: %w", name, err)
	}
	return lastGood(hist, upTo), nil
}

func lastGood(hist []*helmrelease.Release, upTo int) int {
	best := 0
	for _, r := range hist {
		if r.Info == nil || r.Version > upTo || r.Version <= best {
			continue
		}
		if r.Info.Status == helmrelease.StatusDeployed || r.Info.Status == helmrelease.StatusSuperseded {
			best = r.Version
		}
	}
	return best
}

// MarkFailed records r as failed with description: an unlocked stuck revision, or a revision
// Helm deployed while the add-on never became ready. Nothing in the cluster changes.
func (s *Store) MarkFailed(r *helmrelease.Release, description string) error {
	r.Info.Status = helmrelease.StatusFailed
	r.Info.Description = description
	if err := s.cfg.Releases.Update(r); err != nil {
		return fmt.Errorf("mark release %s revision %d failed: %w", r.Name, r.Version, err)
	}
	return nil
}

// WithNamespace pins the namespace Helm uses for objects without one, whatever the kubeconfig's
// context says; everything else comes from getter.
func WithNamespace(getter genericclioptions.RESTClientGetter, namespace string) genericclioptions.RESTClientGetter {
	return namespaceGetter{getter, namespace}
}

type namespaceGetter struct {
	genericclioptions.RESTClientGetter
	namespace string
}

func (g namespaceGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return namespacedConfig{g.RESTClientGetter.ToRawKubeConfigLoader(), g.namespace}
}

type namespacedConfig struct {
	inner     clientcmd.ClientConfig
	namespace string
}

func (c namespacedConfig) RawConfig() (clientcmdapi.Config, error) { return c.inner.RawConfig() }
func (c namespacedConfig) ClientConfig() (*rest.Config, error)     { return c.inner.ClientConfig() }
func (c namespacedConfig) ConfigAccess() clientcmd.ConfigAccess    { return c.inner.ConfigAccess() }
func (c namespacedConfig) Namespace() (string, bool, error)        { return c.namespace, true, nil }
