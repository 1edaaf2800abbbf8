package server

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/installer/bundle"
	"github.com/kruise-addon/kruise-addon/installer/bundle/bundletest"
	"github.com/kruise-addon/kruise-addon/installer/server"
	"github.com/kruise-addon/kruise-addon/installer/server/servertest"
)

// A console installs from a bundle the server was given and the mirror its images were pushed
// to, as the CLI's --bundle and --registry do: every image runs from the mirror by digest. A
// version the server has a chart for, from another bundle, that the cluster's version does not
// support is refused at the request (409) with the table's reason, before any operation; an
// upgrade to a version the path rules allow runs.
func TestInstallFromABundleAndItsMirrorThroughTheAPI(t *testing.T) {
	const ns = "kruise-api-airgap"
	dir := t.TempDir()
	m := servertest.WriteBundle(t, dir, "kruise.tar", "")
	servertest.WriteBundle(t, dir, "old.tar", "1.1.42")
	host := bundletest.Registry(t, "", "")
	b, err := bundle.Open(filepath.Join(dir, "kruise.tar"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bundle.Push(context.Background(), b, bundle.PushOptions{Registry: bundle.Registry{Host: host}}); err != nil {
		t.Fatal(err)
	}
	_ = b.Close()
	c, _ := startServer(t, func(o *server.Options) { o.BundleDir = dir })
	mirror := map[string]any{"host": host}

	status, data := c.do(t, "POST", "/v1/clusters/test/addon/install", operatorToken, map[string]any{"namespace": ns, "version": "1.1.42", "registry": mirror, "values": testValues(nil)})
	if e := want[server.ErrorBody](t, status, data, http.StatusConflict); e.Reason != server.ReasonRefused || !strings.Contains(e.Error, "add-on 1.1.42 supports clusters") {
		t.Errorf("install of a version the cluster does not support: %s, want Refused with the table's reason", data)
	}

	c.run(t, "install", "test", map[string]any{"namespace": ns, "bundle": "kruise.tar", "registry": mirror,
		"values": testValues(nil), "timeout": installTimeout.String()})
	t.Cleanup(func() { c.run(t, "uninstall", "test", map[string]any{"namespace": ns}) })
	digest := map[string]string{}
	for _, img := range m.Images {
		digest[img.Repository] = img.Digest
	}
	dep, err := env.Clientset.AppsV1().Deployments(ns).Get(context.Background(), "kruise-controller-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := env.Clientset.AppsV1().DaemonSets(ns).Get(context.Background(), "kruise-daemon", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{"manager": dep.Spec.Template.Spec.Containers[0].Image, "daemon": ds.Spec.Template.Spec.Containers[0].Image}
	want := map[string]string{
		"manager": host + "/kruise-addon/kruise-manager@" + digest["kruise-addon/kruise-manager"],
		"daemon":  host + "/kruise-addon/kruise-daemon@" + digest["kruise-addon/kruise-daemon"],
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("images the install runs (-want +got):\n%s", diff)
	}

	// An upgrade to a version the path rules allow (the same one, from the server's own chart)
	// passes the request's check and runs.
	c.run(t, "upgrade", "test", map[string]any{"namespace": ns, "version": m.Chart.AppVersion, "values": testValues(nil), "timeout": installTimeout.String()})
}
