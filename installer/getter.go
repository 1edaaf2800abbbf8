package installer

import (
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// namespaceGetter pins the namespace Helm uses for objects without one, whatever the
// kubeconfig's context says.
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

func (c namespacedConfig) Namespace() (string, bool, error) { return c.namespace, true, nil }
