package server

import (
	"fmt"
	"os"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// InClusterName is the name of the cluster the server runs in, when the configuration allows it.
const InClusterName = "in-cluster"

// ClusterConfig is the clusters file (--config): the only clusters the API acts on, and the
// limits the server holds its clients to.
//
//	clusters:
//	- name: prod-eu
//	  kubeconfig: /etc/kruise-addon/clusters/prod-eu
//	  context: admin@prod-eu   # optional; default: the kubeconfig's current context
//	inCluster: true            # also serve "in-cluster", through the pod's service account
//	limits:                    # optional; see Limits for every field and its default
//	  maxConnectionsPerClient: 64
type ClusterConfig struct {
	Clusters  []ClusterEntry `json:"clusters"`
	InCluster bool           `json:"inCluster,omitempty"`
	Limits    Limits         `json:"limits,omitempty"`
}

// ClusterEntry names one kubeconfig.
type ClusterEntry struct {
	Name       string `json:"name"`
	Kubeconfig string `json:"kubeconfig"`
	Context    string `json:"context,omitempty"`
}

// Cluster is a cluster the server may act on.
type Cluster struct {
	Name string `json:"name"`
	// Source says where its credentials come from: kubeconfig or in-cluster; never the
	// kubeconfig's content or path.
	Source string `json:"source"`
	getter genericclioptions.RESTClientGetter
}

// Clusters are the configured clusters by name.
type Clusters map[string]Cluster

// Names lists the cluster names, sorted.
func (c Clusters) Names() []string {
	names := make([]string, 0, len(c))
	for n := range c {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LoadConfig reads and validates the clusters file: its clusters and its limits. Every
// kubeconfig must exist; every problem is reported at once, naming the field.
func LoadConfig(path string) (Clusters, Limits, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Limits{}, fmt.Errorf("clusters file: %w", err)
	}
	var cfg ClusterConfig
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return nil, Limits{}, fmt.Errorf("clusters file %s: %w", path, err)
	}
	clusters, err := cfg.Build(inClusterAvailable)
	return clusters, cfg.Limits, err
}

func inClusterAvailable() error {
	_, err := rest.InClusterConfig()
	return err
}

// Build validates the configuration, limits included, and makes its clusters. inCluster says
// whether the in-cluster configuration can be used (nil when it can).
func (cfg ClusterConfig) Build(inCluster func() error) (Clusters, error) {
	errs := cfg.Limits.validate(field.NewPath("limits"))
	out := Clusters{}
	root := field.NewPath("clusters")
	for k, e := range cfg.Clusters {
		p := root.Index(k)
		for _, msg := range validation.IsDNS1123Label(e.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), e.Name, msg))
		}
		if e.Name == InClusterName {
			errs = append(errs, field.Invalid(p.Child("name"), e.Name, "is reserved for the cluster the server runs in; set inCluster: true instead"))
		}
		if _, dup := out[e.Name]; dup {
			errs = append(errs, field.Duplicate(p.Child("name"), e.Name))
		}
		if e.Kubeconfig == "" {
			errs = append(errs, field.Required(p.Child("kubeconfig"), "the path of this cluster's kubeconfig"))
		} else if _, err := os.Stat(e.Kubeconfig); err != nil {
			errs = append(errs, field.Invalid(p.Child("kubeconfig"), e.Kubeconfig, fmt.Sprintf("must be a readable kubeconfig file: %v", err)))
		}
		f := genericclioptions.NewConfigFlags(false)
		kc, ctx := e.Kubeconfig, e.Context
		f.KubeConfig, f.Context = &kc, &ctx
		out[e.Name] = Cluster{Name: e.Name, Source: "kubeconfig", getter: f}
	}
	if cfg.InCluster {
		if err := inCluster(); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("inCluster"), true, fmt.Sprintf("the server does not run in a pod with a service account: %v", err)))
		}
		// An empty kubeconfig path makes client-go fall back to the pod's service account.
		empty := ""
		f := genericclioptions.NewConfigFlags(false)
		f.KubeConfig = &empty
		out[InClusterName] = Cluster{Name: InClusterName, Source: "in-cluster", getter: f}
	}
	if len(out) == 0 {
		errs = append(errs, field.Required(root, "at least one cluster, or inCluster: true"))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("clusters file: %w", errs.ToAggregate())
	}
	return out, nil
}
