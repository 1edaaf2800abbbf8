package installer

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// DefaultRequestTimeout bounds each request to the cluster when the kubeconfig (or the CLI's
// --request-timeout) sets no timeout. Helm's release storage and discovery take no context, so
// without it one silent apiserver would hold a command for ever.
const DefaultRequestTimeout = 30 * time.Second

const discoveryQPS, discoveryBurst = 50, 300

// boundedGetter hands out REST configs that always carry a request timeout, to our clients and
// to Helm's alike. Every method that builds a config is overridden: the embedded getter's own
// discovery and mapper would bypass ToRESTConfig.
type boundedGetter struct {
	genericclioptions.RESTClientGetter
	timeout time.Duration

	mu        sync.Mutex
	discovery discovery.CachedDiscoveryInterface
	mapper    meta.RESTMapper
}

func newBoundedGetter(g genericclioptions.RESTClientGetter, timeout time.Duration) *boundedGetter {
	return &boundedGetter{RESTClientGetter: g, timeout: timeout}
}

func (g *boundedGetter) bound(c *rest.Config) *rest.Config {
	if c.Timeout > 0 {
		return c
	}
	c = rest.CopyConfig(c)
	c.Timeout = g.timeout
	return c
}

func (g *boundedGetter) ToRESTConfig() (*rest.Config, error) {
	c, err := g.RESTClientGetter.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return g.bound(c), nil
}

func (g *boundedGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.discovery != nil {
		return g.discovery, nil
	}
	c, err := g.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	// Discovery reads many small documents at once; allow what kubectl allows.
	c = rest.CopyConfig(c)
	c.QPS, c.Burst = discoveryQPS, discoveryBurst
	dc, err := discovery.NewDiscoveryClientForConfig(c)
	if err != nil {
		return nil, err
	}
	g.discovery = memory.NewMemCacheClient(dc)
	return g.discovery, nil
}

func (g *boundedGetter) ToRESTMapper() (meta.RESTMapper, error) {
	dc, err := g.ToDiscoveryClient()
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.mapper == nil {
		g.mapper = restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(dc), dc, nil)
	}
	return g.mapper, nil
}

func (g *boundedGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return boundedConfig{inner: g.RESTClientGetter.ToRawKubeConfigLoader(), g: g}
}

type boundedConfig struct {
	inner clientcmd.ClientConfig
	g     *boundedGetter
}

func (c boundedConfig) RawConfig() (clientcmdapi.Config, error) { return c.inner.RawConfig() }
func (c boundedConfig) ConfigAccess() clientcmd.ConfigAccess    { return c.inner.ConfigAccess() }
func (c boundedConfig) Namespace() (string, bool, error)        { return c.inner.Namespace() }
func (c boundedConfig) ClientConfig() (*rest.Config, error) {
	cfg, err := c.inner.ClientConfig()
	if err != nil {
		return nil, err
	}
	return c.g.bound(cfg), nil
}
