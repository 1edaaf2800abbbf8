package chart

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// testKubeVersion is the version client-only renders claim, the test bed's.
const testKubeVersion = "v1.37.2"

// repoRoot is found from this source file, so the tests work from any working directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		t.Fatal("cannot locate the repository from the test's source path")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

func chartDir(t testing.TB) string { return filepath.Join(repoRoot(t), "charts", "kruise") }

func loadChart(t testing.TB) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir(t))
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	return c
}

// ciValuesFiles returns charts/kruise/ci/*-values.yaml, sorted.
func ciValuesFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir(t), "ci", "*-values.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no ci values files: %v", err)
	}
	sort.Strings(files)
	return files
}

func readValues(t testing.TB, path string) map[string]any {
	t.Helper()
	v, err := chartutil.ReadValuesFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return v.AsMap()
}

// rendered is a client-only install's output, every document decoded strictly into its type.
type rendered struct {
	objects []client.Object // the release manifest
	hooks   []client.Object // hook manifests
	notes   string
}

type renderOptions struct {
	namespace   string
	kubeVersion string
	chart       *chart.Chart // nil loads charts/kruise
	bare        bool         // render vals as given, without testRegistry under them
}

// testRegistry is the manager's and the daemon's image registry under every test's values (the
// hook's follows the manager's): the chart names none, and refuses to render without one.
func testRegistry() map[string]any {
	return map[string]any{
		"manager": map[string]any{"image": map[string]any{"registry": "registry.example.com"}},
		"daemon":  map[string]any{"image": map[string]any{"registry": "registry.example.com"}},
	}
}

// bareValues renders the values exactly as given, the chart's defaults without a registry.
func bareValues(o *renderOptions) { o.bare = true }

// renderRelease installs the chart client-only, as `helm template` and the installer's render do:
// schema validation and the kubeVersion check run exactly as in a real install.
func renderRelease(t testing.TB, vals map[string]any, opts ...func(*renderOptions)) (*release.Release, error) {
	t.Helper()
	o := renderOptions{namespace: "kruise-system", kubeVersion: testKubeVersion}
	for _, f := range opts {
		f(&o)
	}
	kv, err := chartutil.ParseKubeVersion(o.kubeVersion)
	if err != nil {
		return nil, fmt.Errorf("parse kube version: %w", err)
	}
	if o.chart == nil {
		o.chart = loadChart(t)
	}
	if !o.bare {
		vals = mergeValues(testRegistry(), vals)
	}
	install := action.NewInstall(&action.Configuration{Log: func(string, ...any) {}})
	install.ClientOnly = true
	install.DryRun = true
	install.Replace = true
	install.ReleaseName = "kruise"
	install.Namespace = o.namespace
	install.KubeVersion = kv
	return install.Run(o.chart, vals)
}

// render is renderRelease with every document decoded strictly into its type.
func render(t testing.TB, vals map[string]any, opts ...func(*renderOptions)) (*rendered, error) {
	t.Helper()
	rel, err := renderRelease(t, vals, opts...)
	if err != nil {
		return nil, err
	}
	out := &rendered{notes: rel.Info.Notes}
	if out.objects, err = decodeAll(rel.Manifest); err != nil {
		return nil, err
	}
	for _, h := range rel.Hooks {
		objs, err := decodeAll(h.Manifest)
		if err != nil {
			return nil, fmt.Errorf("hook %s: %w", h.Name, err)
		}
		out.hooks = append(out.hooks, objs...)
	}
	return out, nil
}

func inNamespace(ns string) func(*renderOptions) { return func(o *renderOptions) { o.namespace = ns } }

// withChart renders c instead of loading charts/kruise again, for tests that render many times.
func withChart(c *chart.Chart) func(*renderOptions) { return func(o *renderOptions) { o.chart = c } }
func withKubeVersion(v string) func(*renderOptions) {
	return func(o *renderOptions) { o.kubeVersion = v }
}

func mustRender(t testing.TB, vals map[string]any, opts ...func(*renderOptions)) *rendered {
	t.Helper()
	r, err := render(t, vals, opts...)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return r
}

func decoder() k8sruntime.Decoder {
	s := k8sruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		panic(err)
	}
	// Strict: an unknown or duplicated field in a template is an error, not a silent drop.
	return serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDeserializer()
}

func decodeAll(manifest string) ([]client.Object, error) {
	dec := decoder()
	docs := releaseutil.SplitManifests(manifest)
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []client.Object
	for _, k := range keys {
		doc := docs[k]
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		obj, _, err := dec.Decode([]byte(doc), nil, nil)
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w\n%s", k, err, doc)
		}
		co, ok := obj.(client.Object)
		if !ok {
			return nil, fmt.Errorf("decode %s: %T is not an object", k, obj)
		}
		out = append(out, co)
	}
	return out, nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// find returns the object of type T with that name (any namespace) among objs, or nil.
func find[T client.Object](objs []client.Object, name string) T {
	var zero T
	for _, o := range objs {
		if typed, ok := o.(T); ok && o.GetName() == name {
			return typed
		}
	}
	return zero
}

// all returns every object of type T among objs.
func all[T client.Object](objs []client.Object) []T {
	var out []T
	for _, o := range objs {
		if typed, ok := o.(T); ok {
			out = append(out, typed)
		}
	}
	return out
}

// values builds a values map from dotted paths: values("manager.replicas", 2, "daemon.enabled", false).
func values(kv ...any) map[string]any {
	out := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		path := strings.Split(kv[i].(string), ".")
		m := out
		for _, p := range path[:len(path)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[path[len(path)-1]] = kv[i+1]
	}
	return out
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return b
}
