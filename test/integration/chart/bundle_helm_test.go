package chart

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/installer/bundle"
	"github.com/kruise-addon/kruise-addon/installer/bundle/bundletest"
)

// CI pipelines that run plain helm get the chart from the air-gap bundle two ways: pushed to
// the mirror registry as a Helm OCI artifact (`helm pull/upgrade oci://...`), and as a static
// Helm repository (`helm repo add`, `helm install --version`) on any file server. Both install
// into the test apiserver with the plain helm CLI.
func TestPlainHelmFromBundle(t *testing.T) {
	h := newHelmCLI(t)
	fsys := os.DirFS(chartDir(t))
	c, err := bundle.PackageChart(fsys)
	if err != nil {
		t.Fatal(err)
	}
	version := c.Metadata.Version
	// The CRDs stay the test bed's and the namespaces helm's, so that uninstall leaves nothing
	// that would need kube-controller-manager to finish: without the daemon the chart renders no
	// daemon config namespace (which must not be the install namespace).
	install := func(t *testing.T, release, ns string, source ...string) {
		t.Helper()
		args := append([]string{"upgrade", "--install", release}, source...)
		args = append(args, "--version", version, "-n", ns, "--create-namespace",
			"--set", "crds.managed=false", "--set", "installation.createNamespace=false", "--set", "installation.namespace="+ns, "--set", "daemon.enabled=false")
		h.mustRun(t, args...)
		var list []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
			Chart  string `json:"chart"`
		}
		out := h.mustRun(t, "list", "-n", ns, "-o", "json")
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Errorf("helm list: %v\n%s", err, out)
		}
		if len(list) != 1 || list[0].Name != release {
			t.Errorf("helm list -n %s: %s, want release %s alone", ns, out, release)
		} else if d := cmp.Diff([]string{"deployed", "kruise-" + version}, []string{list[0].Status, list[0].Chart}); d != "" {
			t.Errorf("release status and chart (-want +got):\n%s", d)
		}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "kruise-controller-manager"}, &appsv1.Deployment{}); err != nil {
			t.Errorf("the manager Deployment after the install: %v", err)
		}
		h.mustRun(t, "uninstall", release, "-n", ns, "--no-hooks")
	}

	t.Run("the chart pushed as an OCI artifact is pulled byte for byte and installed with helm upgrade oci://", func(t *testing.T) {
		dir := t.TempDir()
		if err := bundletest.WriteLayout(filepath.Join(dir, "layout"), 64, bundletest.ChartRefs(c.Metadata.AppVersion)...); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := bundle.Create(context.Background(), bundle.CreateOptions{Chart: c, Layout: filepath.Join(dir, "layout")}, &buf); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "b.tar")
		if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := bundle.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		host := bundletest.Registry(t, "", "")
		pushed, err := bundle.Push(context.Background(), b, bundle.PushOptions{Registry: bundle.Registry{Host: host}, ChartRepository: "charts"})
		if err != nil {
			t.Fatal(err)
		}
		pulled := filepath.Join(dir, "pulled")
		if err := os.Mkdir(pulled, 0o755); err != nil {
			t.Fatal(err)
		}
		h.mustRun(t, "pull", pushed.Chart, "--version", version, "--plain-http", "-d", pulled)
		got, err := os.ReadFile(filepath.Join(pulled, c.FileName()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, c.Data) {
			t.Errorf("helm pulled %d bytes, the bundle's chart is %d bytes", len(got), len(c.Data))
		}
		install(t, "kruise-oci", "kruise-oci", pushed.Chart, "--plain-http")
	})

	t.Run("a static repository serves helm repo add and helm install --version", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := bundle.WriteRepository(dir, c, ""); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
		defer srv.Close()
		h.mustRun(t, "repo", "add", "kruise-static", srv.URL)
		install(t, "kruise-repo", "kruise-repo", "kruise-static/kruise")
	})
}
