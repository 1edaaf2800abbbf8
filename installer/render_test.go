package installer

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chartutil"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/kruise-addon/kruise-addon/charts"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/installer/chartsource"
	"github.com/kruise-addon/kruise-addon/installer/facts"
	"github.com/kruise-addon/kruise-addon/installer/placement"
	"github.com/kruise-addon/kruise-addon/installer/preflight"
	"github.com/kruise-addon/kruise-addon/installer/release"
	"github.com/kruise-addon/kruise-addon/installer/spec"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// testImageRegistry is the images' registry in the tests' renders: the chart names none.
const testImageRegistry = "registry.example.com"

// withTestRegistry is o with imageRegistry under its values, its value files and its --set.
func withTestRegistry(o Options) Options {
	o.Values = merge(map[string]any{"imageRegistry": testImageRegistry}, o.Values)
	return o
}

func TestARenderWithoutARegistryIsBadInputNamingImageRegistry(t *testing.T) {
	cases := map[string]Options{
		"the defaults":                   {},
		"the small preset":               {Spec: &SpecChoice{Preset: spec.Small}},
		"a registry only for the daemon": {Set: []string{"daemon.image.registry=mirror.example.com"}},
	}
	for name, o := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Render(context.Background(), RenderOptions{Options: o})
			if want := "set imageRegistry (the registry that serves kruise-addon/kruise-manager:"; !IsInvalid(err) || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want bad input containing %q", err, want)
			}
		})
	}
}

// managerDeployment finds the manager Deployment in a rendered manifest.
func managerDeployment(t *testing.T, manifest string) *appsv1.Deployment {
	t.Helper()
	for _, doc := range strings.Split(manifest, "\n---") {
		if !strings.Contains(doc, "kind: Deployment") || !strings.Contains(doc, "name: kruise-controller-manager") {
			continue
		}
		d := &appsv1.Deployment{}
		if err := yaml.Unmarshal([]byte(doc), d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	t.Fatalf("no manager Deployment in the manifest")
	return nil
}

func TestRender(t *testing.T) {
	cases := map[string]struct {
		opts         Options
		wantReplicas int32
		wantAnti     string // "", "preferred", "required"
		wantSpread   int
	}{
		"small renders one replica and no zone rules":    {opts: Options{Spec: &SpecChoice{Preset: spec.Small}}, wantReplicas: 1},
		"large defaults to preferred zone anti-affinity": {opts: Options{Spec: &SpecChoice{Preset: spec.Large}}, wantReplicas: 3, wantAnti: "preferred"},
		"large with required zones renders hard anti-affinity": {
			opts:         Options{Spec: &SpecChoice{Preset: spec.Large}, Placement: &placement.Options{ZoneMode: placement.ZoneRequired}},
			wantReplicas: 3, wantAnti: "required",
		},
		"large with even zones renders a topology spread": {
			opts:         Options{Spec: &SpecChoice{Preset: spec.Large}, Placement: &placement.Options{ZoneMode: placement.ZoneEven}},
			wantReplicas: 3, wantSpread: 1,
		},
		"--set wins over the preset": {opts: Options{Spec: &SpecChoice{Preset: spec.Small}, Set: []string{"manager.replicas=2"}}, wantReplicas: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Render(context.Background(), RenderOptions{Options: withTestRegistry(tc.opts)})
			if err != nil {
				t.Fatal(err)
			}
			d := managerDeployment(t, out)
			anti := ""
			if a := d.Spec.Template.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
				if len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
					anti = "required"
				} else if len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
					anti = "preferred"
				}
			}
			got := struct {
				Replicas int32
				Anti     string
				Spread   int
			}{*d.Spec.Replicas, anti, len(d.Spec.Template.Spec.TopologySpreadConstraints)}
			want := struct {
				Replicas int32
				Anti     string
				Spread   int
			}{tc.wantReplicas, tc.wantAnti, tc.wantSpread}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("manager placement (-want +got):\n%s", diff)
			}
		})
	}
}

// failingChart copies charts/kruise with one more template that fails when manager.logLevel is
// 7, a value the schema accepts.
func failingChart(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "kruise")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("..", "charts", "kruise"))); err != nil {
		t.Fatal(err)
	}
	tpl := `{{- if eq (int .Values.manager.logLevel) 7 }}{{ fail "logLevel 7 is refused by this test chart" }}{{- end }}` + "\n"
	if err := os.WriteFile(filepath.Join(dst, "templates", "zz-test-fail.yaml"), []byte(tpl), 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestRenderRefusesBadValues(t *testing.T) {
	cases := map[string]Options{
		"a release name Helm would refuse is invalid":                    {ReleaseName: "Kruise_Addon"},
		"a namespace that is no DNS-1123 label is invalid":               {Namespace: "Kruise.System"},
		"a template that fails on a value the schema accepts is invalid": {ChartPath: failingChart(t), Set: []string{"manager.logLevel=7"}},
		"a replica count that is not a number fails the schema":          {Set: []string{"manager.replicas=many"}},
		"an unknown preset is invalid":                                   {Spec: &SpecChoice{Preset: "medium"}},
		"two node modes are invalid":                                     {Placement: &placement.Options{Nodes: []string{"a"}, Pools: []string{"b"}}},
	}
	for name, o := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Render(context.Background(), RenderOptions{Options: withTestRegistry(o)})
			if diff := cmp.Diff(true, IsInvalid(err)); diff != "" {
				t.Errorf("invalid error, got %v (-want +got):\n%s", err, diff)
			}
		})
	}
}

// containerArgs finds the args of the first container of the named workload in a manifest.
func containerArgs(t *testing.T, manifest, kind, name string) []string {
	t.Helper()
	for _, doc := range strings.Split(manifest, "\n---") {
		if !strings.Contains(doc, "kind: "+kind+"\n") || !strings.Contains(doc, "name: "+name+"\n") {
			continue
		}
		var w struct {
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Args []string `json:"args"`
						} `json:"containers"`
					} `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(doc), &w); err != nil {
			t.Fatal(err)
		}
		return w.Spec.Template.Spec.Containers[0].Args
	}
	t.Fatalf("no %s %s in the manifest", kind, name)
	return nil
}

// TestRenderPassesTheConfigNamespace proves daemon.configNamespace reaches both binaries as
// --daemon-config-namespace, not only the RBAC.
func TestRenderPassesTheConfigNamespace(t *testing.T) {
	cases := map[string]struct {
		set  []string
		want string
	}{
		"the default reaches both binaries":   {want: "--daemon-config-namespace=kruise-daemon-config"},
		"a chosen namespace reaches both too": {set: []string{"daemon.configNamespace=pull-config"}, want: "--daemon-config-namespace=pull-config"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Render(context.Background(), RenderOptions{Options: withTestRegistry(Options{Set: tc.set})})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, w := range []struct{ kind, name string }{{"Deployment", "kruise-controller-manager"}, {"DaemonSet", "kruise-daemon"}} {
				args := containerArgs(t, out, w.kind, w.name)
				got[w.kind] = slices.Contains(args, tc.want)
			}
			if diff := cmp.Diff(map[string]bool{"Deployment": true, "DaemonSet": true}, got); diff != "" {
				t.Errorf("%s in the manager's and the daemon's args (-want +got):\n%s", tc.want, diff)
			}
		})
	}
}

// TestSystemConfigNamespaceIsRefused checks a system namespace as daemon.configNamespace is
// bad input naming the value, from the installer, and that the chart alone fails on it too for
// plain helm users.
func TestSystemConfigNamespaceIsRefused(t *testing.T) {
	for _, ns := range []string{"kube-system", "kube-public", "kube-node-lease", "default"} {
		t.Run(ns+" is refused by the installer as bad input", func(t *testing.T) {
			_, err := Render(context.Background(), RenderOptions{Options: withTestRegistry(Options{Set: []string{"daemon.configNamespace=" + ns}})})
			if diff := cmp.Diff(true, IsInvalid(err)); diff != "" {
				t.Fatalf("invalid error, got %v (-want +got):\n%s", err, diff)
			}
			if missing := testkit.Missing(err.Error(), "daemon.configNamespace", `"`+ns+`" is a system namespace`, "does not exist yet"); missing != nil {
				t.Errorf("error %q lacks %q", err, missing)
			}
		})
		t.Run(ns+" fails the chart's own render", func(t *testing.T) {
			err := renderChartAlone(t, map[string]any{"daemon": map[string]any{"configNamespace": ns}})
			if err == nil {
				t.Fatalf("the chart rendered with daemon.configNamespace=%s", ns)
			}
			if missing := testkit.Missing(err.Error(), "daemon.configNamespace", "is a system namespace"); missing != nil {
				t.Errorf("error %q lacks %q", err, missing)
			}
		})
	}
}

// TestConfigNamespaceEqualToTheInstallNamespaceIsRefused: the daemon may read any Secret of its
// config namespace, and the install namespace holds the webhook's CA key. The installer refuses
// it as bad input naming the value and the fix, the chart alone fails on it for plain helm users
// (as installation.namespace and as the release namespace), and preflight refuses it without
// suggesting the install namespace anywhere.
func TestConfigNamespaceEqualToTheInstallNamespaceIsRefused(t *testing.T) {
	t.Run("the installer refuses it as bad input naming the value and the fix", func(t *testing.T) {
		_, err := Render(context.Background(), RenderOptions{Options: withTestRegistry(Options{Namespace: "addon", Set: []string{"daemon.configNamespace=addon"}})})
		if diff := cmp.Diff(true, IsInvalid(err)); diff != "" {
			t.Fatalf("invalid error, got %v (-want +got):\n%s", err, diff)
		}
		if missing := testkit.Missing(err.Error(), `daemon.configNamespace "addon" is the install namespace`, "webhook's CA key", "set it to a namespace that does not exist yet"); missing != nil {
			t.Errorf("error %q lacks %q", err, missing)
		}
	})
	for name, vals := range map[string]map[string]any{
		"the chart fails on installation.namespace": {"installation": map[string]any{"namespace": "addon"}, "daemon": map[string]any{"configNamespace": "addon"}},
		"the chart fails on the release namespace":  {"installation": map[string]any{"namespace": "elsewhere"}, "daemon": map[string]any{"configNamespace": "kruise-system"}},
	} {
		t.Run(name, func(t *testing.T) {
			err := renderChartAlone(t, vals)
			if err == nil {
				t.Fatalf("the chart rendered with %v", vals)
			}
			if missing := testkit.Missing(err.Error(), "daemon.configNamespace", "is the install namespace", "does not exist yet"); missing != nil {
				t.Errorf("error %q lacks %q", err, missing)
			}
		})
	}
	t.Run("preflight refuses it and suggests no install namespace", func(t *testing.T) {
		res, err := PreflightFacts(Options{Namespace: "addon", Set: []string{"daemon.configNamespace=addon"}}, facts.Facts{ServerVersion: "v1.30.4"})
		if err != nil {
			t.Fatal(err)
		}
		var got []preflight.Verdict
		for _, v := range res.Report.Verdicts {
			if v.Check == preflight.CheckConfigNamespace {
				got = append(got, v)
			}
		}
		want := []preflight.Verdict{{
			Check: preflight.CheckConfigNamespace, Severity: preflight.Refused, Message: preflight.InstallNamespaceMessage("addon"),
			Fix: "set daemon.configNamespace to a namespace that does not exist yet (the default is kruise-daemon-config)",
		}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("config namespace verdict (-want +got):\n%s", diff)
		}
	})
}

// renderChartAlone renders the chart with vals as plain helm would, into kruise-system, and
// returns its error.
func renderChartAlone(t *testing.T, vals map[string]any) error {
	t.Helper()
	ch, err := chartsource.Load("")
	if err != nil {
		t.Fatal(err)
	}
	kv, err := chartutil.ParseKubeVersion(DefaultKubeVersion())
	if err != nil {
		t.Fatal(err)
	}
	act := release.NewRender(release.RenderConfig(), release.Options{ReleaseName: "kruise", Namespace: "kruise-system", KubeVersion: kv})
	_, err = act.RunWithContext(context.Background(), ch, vals)
	return err
}

// TestFeatureGatesAreCheckedBeforeAnythingIsApplied turns each gate the manager knows on, and
// one it does not know: the installer accepts every 1.8 gate and refuses the unknown one, as bad
// input naming featureGates, and the chart alone does the same, so its list in _helpers.tpl
// cannot drift from the manager's.
func TestFeatureGatesAreCheckedBeforeAnythingIsApplied(t *testing.T) {
	cases := map[string]struct {
		gates string
		want  []string // nil: accepted
	}{
		"an unknown gate is refused": {gates: "Bogus=true", want: []string{"featureGates", "Bogus"}},
	}
	for gate := range features.Specs() {
		tc := struct {
			gates string
			want  []string
		}{gates: string(gate) + "=true"}
		cases[string(gate)+"=true"] = tc
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Render(context.Background(), RenderOptions{Options: withTestRegistry(Options{Values: map[string]any{"featureGates": tc.gates}})})
			if diff := cmp.Diff(tc.want != nil, IsInvalid(err)); diff != "" {
				t.Fatalf("installer refused, err %v (-want +got):\n%s", err, diff)
			}
			if missing := testkit.Missing(fmt.Sprint(err), tc.want...); tc.want != nil && missing != nil {
				t.Errorf("installer error %q lacks %q", err, missing)
			}
			err = renderChartAlone(t, map[string]any{"featureGates": tc.gates, "imageRegistry": testImageRegistry})
			if diff := cmp.Diff(tc.want != nil, err != nil); diff != "" {
				t.Fatalf("chart refused, err %v (-want +got):\n%s", err, diff)
			}
			if missing := testkit.Missing(fmt.Sprint(err), tc.want...); tc.want != nil && missing != nil {
				t.Errorf("chart error %q lacks %q", err, missing)
			}
		})
	}
}

// TestRenderCopiesTheCRDSpecAsGenerated: the chart parses only the head of each generated CRD
// file (to add the keep policy and the labels) and copies its spec as it is, so that a render
// does not parse and re-serialize the CRDs, which are nearly all of the chart's bytes. A comment
// in a spec is the mark: a parsed and re-serialized spec would have lost it.
func TestRenderCopiesTheCRDSpecAsGenerated(t *testing.T) {
	const file = "files/crds/apps.kruise.io_clonesets.yaml"
	const mark = "  # copied as generated\n"
	dir := t.TempDir()
	err := fs.WalkDir(embeddedChart(t), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, p), 0o755)
		}
		data, err := fs.ReadFile(embeddedChart(t), p)
		if err != nil {
			return err
		}
		if p == file {
			data = []byte(strings.Replace(string(data), "\nspec:\n", "\nspec:\n"+mark, 1))
		}
		return os.WriteFile(filepath.Join(dir, p), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}

	out, err := Render(context.Background(), RenderOptions{Options: withTestRegistry(Options{ChartPath: dir, Spec: &SpecChoice{Preset: spec.Small}})})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "\nspec:\n"+mark+"  group: apps.kruise.io\n") {
		t.Errorf("the CloneSet CRD's spec was not copied as generated: the comment at its top is gone")
	}
	crds, err := fs.Glob(embeddedChart(t), "files/crds/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out, "helm.sh/resource-policy: keep"); got != len(crds) {
		t.Errorf("CRDs with the keep policy: %d, want one per generated file, %d", got, len(crds))
	}
}

func embeddedChart(t *testing.T) fs.FS {
	t.Helper()
	fsys, err := charts.Kruise()
	if err != nil {
		t.Fatal(err)
	}
	return fsys
}

// Every container's CPU, memory and ephemeral-storage are bounded to what a node can give, and a
// request above its limit (which the apiserver refuses only once Helm applies the pod template)
// is bad input before anything is applied, naming both values. The chart's templates decide,
// so plain helm refuses the same values.
func TestResourcesAreBoundedAndRequestsStayWithinLimits(t *testing.T) {
	cases := map[string]struct {
		set []string
		// wantErr are the parts of the error; none means the values render.
		wantErr []string
	}{
		"the defaults render":                  {},
		"a request equal to its limit renders": {set: []string{"manager.resources.requests.cpu=1", "manager.resources.limits.cpu=1000m"}},
		"requests of zero render":              {set: []string{"daemon.resources.requests.cpu=0", "daemon.resources.requests.memory=0"}},
		"64 CPUs and 64Gi render":              {set: []string{"manager.resources.limits.cpu=64", "manager.resources.limits.memory=64Gi"}},
		"quantities as plain numbers render":   {set: []string{"manager.resources.requests.cpu=0.5", "manager.resources.limits.memory=2147483648"}},
		"a CPU limit of 100000 is refused": {set: []string{"manager.resources.limits.cpu=100000"},
			wantErr: []string{"manager.resources.limits.cpu 100000 is out of range", "10m to 64"}},
		"a memory limit of 1Ei is refused": {set: []string{"manager.resources.limits.memory=1Ei"},
			wantErr: []string{"manager.resources.limits.memory 1Ei is out of range", "16Mi to 64Gi"}},
		"a memory request of 1Ei is refused": {set: []string{"manager.resources.requests.memory=1Ei"},
			wantErr: []string{"manager.resources.requests.memory 1Ei is out of range", "0 to 64Gi"}},
		"a daemon CPU request of 100000 is refused": {set: []string{"daemon.resources.requests.cpu=100000"},
			wantErr: []string{"daemon.resources.requests.cpu 100000 is out of range"}},
		"a server memory limit of 1Pi is refused": {set: []string{"server.resources.limits.memory=1Pi"},
			wantErr: []string{"server.resources.limits.memory 1Pi is out of range"}},
		"a memory limit of one byte is refused": {set: []string{"daemon.resources.limits.memory=1"},
			wantErr: []string{"daemon.resources.limits.memory 1 is out of range", "16Mi to 64Gi"}},
		"an ephemeral-storage limit of 2Ti is refused": {set: []string{"manager.resources.limits.ephemeral-storage=2Ti"},
			wantErr: []string{"manager.resources.limits.ephemeral-storage 2Ti is out of range", "16Mi to 1Ti"}},
		"a CPU request above its limit is refused, naming both": {set: []string{"manager.resources.requests.cpu=2", "manager.resources.limits.cpu=1"},
			wantErr: []string{"manager.resources.requests.cpu 2 is above manager.resources.limits.cpu 1"}},
		"a memory request above its limit is refused, naming both": {set: []string{"daemon.resources.requests.memory=1Gi", "daemon.resources.limits.memory=1000Mi"},
			wantErr: []string{"daemon.resources.requests.memory 1Gi is above daemon.resources.limits.memory 1000Mi"}},
		"a request above its limit in other units is refused": {set: []string{"manager.resources.requests.cpu=1500m", "manager.resources.limits.cpu=1.2"},
			wantErr: []string{"manager.resources.requests.cpu 1500m is above manager.resources.limits.cpu 1.2"}},
		"a quantity in exponent form is refused by the schema": {set: []string{"manager.resources.limits.cpu=1e3"},
			wantErr: []string{"/manager/resources/limits/cpu"}},
		"a negative quantity is refused by the schema": {set: []string{"manager.resources.requests.memory=-1Gi"},
			wantErr: []string{"/manager/resources/requests/memory"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Render(context.Background(), RenderOptions{Options: withTestRegistry(Options{Set: tc.set})})
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("render: %v", err)
				}
				return
			}
			if diff := cmp.Diff(true, IsInvalid(err)); diff != "" {
				t.Fatalf("invalid error, got %v (-want +got):\n%s", err, diff)
			}
			if missing := testkit.Missing(err.Error(), tc.wantErr...); missing != nil {
				t.Errorf("error %q lacks %q", err, missing)
			}
		})
	}
}
