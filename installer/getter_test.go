package installer

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kruise-addon/kruise-addon/installer/release"
)

func TestBoundedGetter(t *testing.T) {
	cases := map[string]struct {
		timeout string
		want    time.Duration
	}{
		"a kubeconfig without a request timeout gets the default": {timeout: "0", want: DefaultRequestTimeout},
		"a request timeout the caller set is kept":                {timeout: "7s", want: 7 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			server, timeout := "https://127.0.0.1:1", tc.timeout
			f := genericclioptions.NewConfigFlags(false)
			f.APIServer, f.Timeout = &server, &timeout
			g := release.WithNamespace(newBoundedGetter(f, DefaultRequestTimeout), "ns")
			rc, err := g.ToRESTConfig()
			if err != nil {
				t.Fatal(err)
			}
			// Helm builds its clients from the raw loader too.
			lc, err := g.ToRawKubeConfigLoader().ClientConfig()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]time.Duration{tc.want, tc.want}, []time.Duration{rc.Timeout, lc.Timeout}); diff != "" {
				t.Errorf("timeout of the REST config, of the loader's config (-want +got):\n%s", diff)
			}
		})
	}
}
