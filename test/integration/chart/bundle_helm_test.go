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

	t.Run("the chart pushed as an OCI artifact names the mirror, runs every image by digest and installs with helm upgrade oci://", func(t *testing.T) {
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
		mirrored, err := bundle.MirroredChart(b, host)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, mirrored.Data) {
			t.Errorf("helm pulled %d bytes, the bundle's chart pointed at the mirror is %d bytes", len(got), len(mirrored.Data))
		}
		// Installed as found: with no value set, every image runs from the mirror by digest.
		out := h.mustRun(t, "template", "kruise", filepath.Join(pulled, c.FileName()), "-n", "kruise-system")
		objs, err := decodeAll(out)
		if err != nil {
			t.Fatal(err)
		}
		digests := map[string]string{}
		for _, img := range b.Manifest.Images {
			for _, role := range img.Roles {
				digests[string(role)] = host + "/" + img.Repository + "@" + img.Digest
			}
		}
		gotImages := map[string]string{
			"manager": find[*appsv1.Deployment](objs, "kruise-controller-manager").Spec.Template.Spec.Containers[0].Image,
			"daemon":  find[*appsv1.DaemonSet](objs, "kruise-daemon").Spec.Template.Spec.Containers[0].Image,
		}
		if d := cmp.Diff(map[string]string{"manager": digests["manager"], "daemon": digests["daemon"]}, gotImages); d != "" {
			t.Errorf("the mirrored chart's images with no values set (-want +got):\n%s", d)
		}
		install(t, "kruise-oci", "kruise-oci", pushed.Chart, "--plain-http")
	})

	t.Run("a static repository serves helm repo add and helm install --version", func(t *testing.T) {
		dir := t.TempDir()
		named, err := bundle.RegistryChart(c, "mirror.example.com:5000/kruise")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bundle.WriteRepository(dir, named, ""); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
		defer srv.Close()
		h.mustRun(t, "repo", "add", "kruise-static", srv.URL)
		install(t, "kruise-repo", "kruise-repo", "kruise-static/kruise")
	})
}
