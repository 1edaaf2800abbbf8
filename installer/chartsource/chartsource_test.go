package chartsource

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"
)

func names(c *chart.Chart) map[string]bool {
	m := map[string]bool{}
	for _, t := range c.Templates {
		m[t.Name] = true
	}
	for _, f := range c.Files {
		m[f.Name] = true
	}
	return m
}

func TestLoad(t *testing.T) {
	cases := map[string]string{
		"the embedded chart":         "",
		"a chart directory override": filepath.Join("..", "..", "charts", "kruise"),
	}
	for name, path := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			n := names(c)
			got := map[string]bool{
				"name is kruise":                       c.Metadata.Name == "kruise",
				"_helpers.tpl survives the embed rule": n["templates/_helpers.tpl"],
				"the CRD files are there":              n["files/crds/apps.kruise.io_clonesets.yaml"],
				"the schema is loaded":                 len(c.Schema) > 0,
			}
			want := map[string]bool{"name is kruise": true, "_helpers.tpl survives the embed rule": true, "the CRD files are there": true, "the schema is loaded": true}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("chart (-want +got):\n%s", diff)
			}
		})
	}
}
