package installer

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/kruise-addon/kruise-addon/installer/placement"
	"github.com/kruise-addon/kruise-addon/installer/spec"
)

// TestRenderIsHelmsInstallByteForByte: a render whose CRD specs skip Helm's sorter returns the
// bytes Helm's client-only install returns for the same chart and values (order, # Source:
// lines and hooks included), for every preset and for values on top of one. Every CRD file of
// the embedded chart must take that path, so that the comparison is not of Helm with itself.
func TestRenderIsHelmsInstallByteForByte(t *testing.T) {
	crds, err := fs.Glob(embeddedChart(t), crdFiles+"*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kv, err := chartutil.ParseKubeVersion(DefaultKubeVersion())
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]Options{
		"the small preset":  {Spec: &SpecChoice{Preset: spec.Small}},
		"the large preset":  {Spec: &SpecChoice{Preset: spec.Large}},
		"the custom preset": {Spec: &SpecChoice{Preset: spec.Custom, Overrides: spec.Overrides{Replicas: 2, Resources: spec.Resources{RequestsCPU: "200m", RequestsMemory: "512Mi", LimitsCPU: "2", LimitsMemory: "2Gi"}}}},
		"values and placement on top of a preset": {
			Spec: &SpecChoice{Preset: spec.Large}, Placement: &placement.Options{ZoneMode: placement.ZoneEven},
			ReleaseName: "addon", Namespace: "addon-system", Set: []string{"manager.replicas=5", "webhookConfiguration.timeoutSeconds=7"},
		},
		"values that leave the CRDs unmanaged": {Spec: &SpecChoice{Preset: spec.Small}, Set: []string{"crds.managed=false"}},
	}
	for name, opts := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			o := withTestRegistry(opts).withInstallDefaults()
			p, err := prepare(o)
			if err != nil {
				t.Fatal(err)
			}
			rel, err := helmRender(ctx, p.chart, p.values, o, kv)
			if err != nil {
				t.Fatal(err)
			}
			want := withHooks(rel)

			ch, specs := withoutCRDSpecs(p.chart)
			if diff := cmp.Diff(len(crds), len(specs)); diff != "" {
				t.Fatalf("CRD specs taken out of the chart (-want +got):\n%s", diff)
			}
			rel, err = helmRender(ctx, ch, p.values, o, kv)
			if err != nil {
				t.Fatal(err)
			}
			manifest, ok := specs.putBack(rel.Manifest)
			if !ok {
				t.Fatal("the specs could not be put back")
			}
			rel.Manifest = manifest
			if msg := firstDifference(want, withHooks(rel)); msg != "" {
				t.Errorf("the render without the CRD specs differs from Helm's: %s", msg)
			}
			got, err := renderChart(ctx, p.chart, p.values, o, kv)
			if err != nil {
				t.Fatal(err)
			}
			if msg := firstDifference(want, got); msg != "" {
				t.Errorf("renderChart differs from Helm's render: %s", msg)
			}
		})
	}
}

// TestCRDSpecsThatHelmWouldChangeGoThroughHelm: a spec is taken out of the render only when
// Helm's sorter would copy it as it is, and only for the crds.yaml that copies it.
func TestCRDSpecsThatHelmWouldChangeGoThroughHelm(t *testing.T) {
	const head = "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.com\nspec:\n"
	template, err := fs.ReadFile(embeddedChart(t), crdTemplate)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		template string
		spec     string
		wantOut  bool
	}{
		"an indented spec is taken out":                        {template: string(template), spec: "  group: example.com\n  names:\n    kind: Thing\n", wantOut: true},
		"a spec with blank lines is taken out":                 {template: string(template), spec: "  group: example.com\n\n  scope: Namespaced\n", wantOut: true},
		"a line that starts with --- stays":                    {template: string(template), spec: "  group: example.com\n---\n  scope: Namespaced\n"},
		"a line that starts with ---- stays":                   {template: string(template), spec: "  description: |\n----- a rule\n"},
		"a top-level key after the spec stays":                 {template: string(template), spec: "  group: example.com\nstatus: {}\n"},
		"a spec that ends in white space stays":                {template: string(template), spec: "  group: example.com  \n"},
		"a spec that ends in two line breaks stays":            {template: string(template), spec: "  group: example.com\n\n"},
		"a tab-indented spec stays":                            {template: string(template), spec: "\tgroup: example.com\n"},
		"a chart whose crds.yaml parses the spec keeps it all": {template: "{{ range $p, $_ := .Files.Glob \"files/crds/*.yaml\" }}{{ $.Files.Get $p | fromYaml | toYaml }}{{ end }}", spec: "  group: example.com\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &chart.File{Name: crdFiles + "things.yaml", Data: []byte(head + tc.spec)}
			ch := &chart.Chart{
				Metadata:  &chart.Metadata{Name: "kruise"},
				Templates: []*chart.File{{Name: crdTemplate, Data: []byte(tc.template)}},
				Files:     []*chart.File{{Name: "files/webhooks.yaml", Data: []byte("{}\n")}, f},
			}
			got, specs := withoutCRDSpecs(ch)
			if diff := cmp.Diff(tc.wantOut, len(specs) == 1); diff != "" {
				t.Fatalf("spec taken out (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(string(f.Data), string(ch.Files[1].Data)); diff != "" {
				t.Errorf("the chart itself changed (-want +got):\n%s", diff)
			}
			if !tc.wantOut {
				if got != ch {
					t.Errorf("a copy of the chart was made with nothing taken out")
				}
				return
			}
			for placeholder, s := range specs {
				if diff := cmp.Diff(strings.TrimSuffix(tc.spec, "\n"), string(s)); diff != "" {
					t.Errorf("spec taken out (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(head+placeholder+"\n", string(got.Files[1].Data)); diff != "" {
					t.Errorf("file handed to Helm (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// firstDifference describes where got first differs from want, or is empty when they are equal;
// a diff of two renders of 600 kB would bury it.
func firstDifference(want, got string) string {
	if want == got {
		return ""
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	from := max(0, i-200)
	return fmt.Sprintf("at byte %d of %d (got %d):\nwant …%s…\ngot  …%s…", i, len(want), len(got),
		want[from:min(len(want), i+200)], got[from:min(len(got), i+200)])
}

func TestPutBack(t *testing.T) {
	specs := crdSpecs{"  spec-a": []byte("  group: a.example.com"), "  spec-b": []byte("  group: b.example.com")}
	cases := map[string]struct {
		manifest string
		want     string
		wantOK   bool
	}{
		"each placeholder is replaced by its spec, in place": {
			manifest: "---\nkind: B\nspec:\n  spec-b\n---\nkind: A\nspec:\n  spec-a\n",
			want:     "---\nkind: B\nspec:\n  group: b.example.com\n---\nkind: A\nspec:\n  group: a.example.com\n", wantOK: true,
		},
		"a placeholder that is not there is a CRD the values left out": {
			manifest: "---\nkind: A\nspec:\n  spec-a", want: "---\nkind: A\nspec:\n  group: a.example.com", wantOK: true,
		},
		"a placeholder found twice is refused": {manifest: "spec:\n  spec-a\nspec:\n  spec-a\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := specs.putBack(tc.manifest)
			if diff := cmp.Diff(tc.wantOK, ok); diff != "" {
				t.Fatalf("put back (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("manifest (-want +got):\n%s", diff)
			}
		})
	}
}
