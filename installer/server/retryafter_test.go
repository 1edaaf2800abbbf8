package server

import (
	"context"
	"net/http"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kruise-addon/kruise-addon/installer"
)

// unreachableKubeconfig names an apiserver on a port nothing listens on.
const unreachableKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: gone
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: t}
contexts:
- name: gone
  context: {cluster: gone, user: u}
current-context: gone
`

// withUnreachableCluster makes "prod" a cluster whose apiserver refuses connections, through the
// real installer.
func withUnreachableCluster(t *testing.T) func(*Options) {
	return func(o *Options) {
		clusters, err := ClusterConfig{Clusters: []ClusterEntry{{Name: "prod", Kubeconfig: writeTemp(t, "kubeconfig", unreachableKubeconfig)}}}.Build(nil)
		if err != nil {
			t.Fatal(err)
		}
		o.Clusters = clusters
		o.NewInstaller = func(g genericclioptions.RESTClientGetter, opts ...installer.Option) (*installer.Installer, error) {
			return installer.New(g, opts...)
		}
	}
}

// stopped gives the server a context that has ended, as when it stops.
func stopped(o *Options) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o.Context = ctx
}

func TestRetryAfterOn503(t *testing.T) {
	cases := []struct {
		name         string
		configure    func(*testing.T) func(*Options)
		method, path string
	}{
		{"the status of a cluster whose apiserver cannot be reached", withUnreachableCluster, "GET", "/v1/clusters/prod/addon"},
		{"the versions of a cluster whose version cannot be read", withUnreachableCluster, "GET", "/v1/versions?cluster=prod"},
		{"a preflight of a cluster that cannot be reached", withUnreachableCluster, "POST", "/v1/clusters/prod/preflight"},
		{"an install while the server stops", func(*testing.T) func(*Options) { return stopped }, "POST", "/v1/clusters/prod/addon/install"},
		{"an uninstall while the server stops", func(*testing.T) func(*Options) { return stopped }, "POST", "/v1/clusters/prod/addon/uninstall"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, defaultAccess(), nil, tc.configure(t))
			req, err := http.NewRequest(tc.method, f.ts.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp := f.send(t, req, operatorToken)
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != retryAfterUnavailable {
				t.Errorf("status %d Retry-After %q, want 503 with %s", resp.StatusCode, resp.Header.Get("Retry-After"), retryAfterUnavailable)
			}
		})
	}
}
