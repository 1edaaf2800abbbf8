package chart

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/test/framework"
)

const (
	// helmBuildTimeout covers a cold build of the helm CLI on a busy 2-core machine.
	helmBuildTimeout = 8 * time.Minute
	// helmCommandTimeout bounds one helm command against the test apiserver.
	helmCommandTimeout = 2 * time.Minute
	// crdsGoneTimeout bounds the removal of the CRDs the test bed pre-installs.
	crdsGoneTimeout = time.Minute
)

// helmCLI is the plain helm binary, built at the pinned version by scripts/helm/build.sh, run
// with its own config dirs and the test bed's kubeconfig.
type helmCLI struct {
	bin string
	env []string
}

func newHelmCLI(t *testing.T) *helmCLI {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), helmBuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "scripts", "helm", "build.sh"))
	// The script's go build may outlive a killed script and hold its output open; stop waiting.
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("scripts/helm/build.sh: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	home := t.TempDir()
	return &helmCLI{
		bin: lines[len(lines)-1],
		env: append(os.Environ(),
			"KUBECONFIG="+env.Kubeconfig,
			"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
			"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
			"HELM_DATA_HOME="+filepath.Join(home, "data"),
		),
	}
}

func (h *helmCLI) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), helmCommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.bin, args...)
	cmd.Env = h.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (h *helmCLI) mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := h.run(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func TestPlainHelmCLI(t *testing.T) {
	h := newHelmCLI(t)
	if out := h.mustRun(t, "version", "--short"); !strings.HasPrefix(out, "v3.22.0") {
		t.Fatalf("helm version %q, want v3.22.0 (the version ldflags are missing)", out)
	}
	dir := chartDir(t)

	t.Run("lint passes with the defaults and every ci values file", func(t *testing.T) {
		h.mustRun(t, "lint", "--strict", dir, "--set", "imageRegistry=registry.example.com")
		for _, f := range ciValuesFiles(t) {
			h.mustRun(t, "lint", "--strict", dir, "-f", f)
		}
	})

	t.Run("template with the bare defaults fails naming imageRegistry", func(t *testing.T) {
		out, err := h.run(t, "template", "kruise", dir, "-n", "kruise-system")
		if want := "set imageRegistry (the registry that serves kruise-addon/kruise-manager:"; err == nil || !strings.Contains(out, want) {
			t.Errorf("helm template with the defaults: error %v, want one naming %q:\n%s", err, want, out)
		}
	})

	t.Run("template renders with the defaults and every ci values file", func(t *testing.T) {
		for _, args := range append([][]string{{"--set", "imageRegistry=registry.example.com"}}, valuesArgs(ciValuesFiles(t))...) {
			out := h.mustRun(t, append([]string{"template", "kruise", dir, "-n", "kruise-system"}, args...)...)
			objs, err := decodeAll(out)
			if err != nil {
				t.Fatalf("helm template %v: %v", args, err)
			}
			if find[*appsv1.Deployment](objs, "kruise-controller-manager") == nil {
				t.Errorf("helm template %v: no manager Deployment", args)
			}
		}
	})

	t.Run("install with a CPU request above its limit is refused before anything is applied", func(t *testing.T) {
		out, err := h.run(t, "install", "kruise", dir, "-n", "kruise-system", "--create-namespace", "--set", "imageRegistry=registry.example.com",
			"--set", "manager.resources.requests.cpu=2", "--set", "manager.resources.limits.cpu=1")
		if err == nil {
			t.Fatalf("helm install succeeded:\n%s", out)
		}
		if want := "manager.resources.requests.cpu 2 is above manager.resources.limits.cpu 1"; !strings.Contains(out, want) {
			t.Errorf("helm install output lacks %q:\n%s", want, out)
		}
		if out, err := h.run(t, "status", "kruise", "-n", "kruise-system"); err == nil {
			t.Errorf("a release exists after the refused install:\n%s", out)
		}
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: "kruise-system", Name: "kruise-controller-manager"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
			t.Errorf("manager Deployment after the refused install: %v, want NotFound", err)
		}
	})

	t.Run("upgrade --install, upgrade with a changed value, uninstall keeps the CRDs", func(t *testing.T) {
		ctx := t.Context()
		c := env.Client
		removePreinstalledCRDs(t)

		h.mustRun(t, "upgrade", "--install", "kruise", dir, "-n", "kruise-system", "--create-namespace", "--set", "imageRegistry=registry.example.com")
		assertRelease(t, h, 1, "deployed")
		dep := &appsv1.Deployment{}
		mustGet(t, client.ObjectKey{Namespace: "kruise-system", Name: "kruise-controller-manager"}, dep)
		if *dep.Spec.Replicas != 1 {
			t.Errorf("manager replicas %d after install, want 1", *dep.Spec.Replicas)
		}
		mustGet(t, client.ObjectKey{Namespace: "kruise-system", Name: "kruise-daemon"}, &appsv1.DaemonSet{})
		crds := ourCRDs(t)
		if len(crds) != 18 {
			t.Fatalf("installed CRDs: %d, want 18", len(crds))
		}
		for _, crd := range crds {
			if crd.Annotations["helm.sh/resource-policy"] != "keep" || crd.Annotations["meta.helm.sh/release-name"] != "kruise" {
				t.Errorf("CRD %s annotations %v: want the keep policy, owned by release kruise", crd.Name, crd.Annotations)
			}
		}

		// Do what the manager does at start: write the certificates and patch the CA bundle in.
		secret := &corev1.Secret{}
		mustGet(t, client.ObjectKey{Namespace: "kruise-system", Name: "kruise-webhook-certs"}, secret)
		if len(secret.Data) != 0 {
			t.Errorf("webhook Secret data after install: %d keys, want none", len(secret.Data))
		}
		secret.Data = map[string][]byte{"ca-cert.pem": []byte("ca"), "cert.pem": []byte("cert"), "key.pem": []byte("key")}
		if err := c.Update(ctx, secret); err != nil {
			t.Fatalf("write certificates: %v", err)
		}
		mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
		mustGet(t, client.ObjectKey{Name: "kruise-mutating-webhook-configuration"}, mwc)
		for i := range mwc.Webhooks {
			mwc.Webhooks[i].ClientConfig.CABundle = []byte("ca")
		}
		if err := c.Update(ctx, mwc); err != nil {
			t.Fatalf("patch CA bundle: %v", err)
		}

		h.mustRun(t, "upgrade", "--install", "kruise", dir, "-n", "kruise-system", "--create-namespace", "--set", "imageRegistry=registry.example.com",
			"--set", "manager.replicas=2", "--set", "webhookConfiguration.timeoutSeconds=10")
		assertRelease(t, h, 2, "deployed")
		mustGet(t, client.ObjectKey{Namespace: "kruise-system", Name: "kruise-controller-manager"}, dep)
		if *dep.Spec.Replicas != 2 {
			t.Errorf("manager replicas %d after the upgrade, want 2", *dep.Spec.Replicas)
		}
		mustGet(t, client.ObjectKey{Namespace: "kruise-system", Name: "kruise-webhook-certs"}, secret)
		if d := cmp.Diff(map[string]string{"ca-cert.pem": "ca", "cert.pem": "cert", "key.pem": "key"}, stringData(secret.Data)); d != "" {
			t.Errorf("certificates after the upgrade (-written +now):\n%s", d)
		}
		mustGet(t, client.ObjectKey{Name: "kruise-mutating-webhook-configuration"}, mwc)
		for _, w := range mwc.Webhooks {
			if string(w.ClientConfig.CABundle) != "ca" || *w.TimeoutSeconds != 10 {
				t.Errorf("webhook %s after the upgrade: caBundle %q, timeout %d; want the patched bundle kept and timeout 10", w.Name, w.ClientConfig.CABundle, *w.TimeoutSeconds)
			}
		}

		// Plain helm has no cluster-wide lock; Helm's ownership check is what keeps a second
		// release in another namespace from taking the first's cluster-scoped objects.
		out, err := h.run(t, "install", "kruise-again", dir, "-n", "kruise-again", "--create-namespace", "--set", "imageRegistry=registry.example.com")
		t.Cleanup(func() {
			_, _, _ = env.Kubectl(context.Background(), "delete", "namespace", "kruise-again", "--wait=false")
		})
		if err == nil {
			t.Errorf("a second release of the chart in another namespace was installed:\n%s", out)
		} else if !strings.Contains(out, "invalid ownership metadata") {
			t.Errorf("second release refused without naming the ownership conflict:\n%s", out)
		}
		cr := &rbacv1.ClusterRole{}
		mustGet(t, client.ObjectKey{Name: "kruise-manager-role"}, cr)
		if got := cr.Annotations["meta.helm.sh/release-namespace"]; got != "kruise-system" {
			t.Errorf("the manager's ClusterRole belongs to release namespace %q after the second install, want kruise-system", got)
		}
		assertRelease(t, h, 2, "deployed")

		// No kube-controller-manager runs here, so the pre-delete Job would never finish; the hook
		// is proven by rendering, and this proves that the CRDs outlive the release.
		h.mustRun(t, "uninstall", "kruise", "-n", "kruise-system", "--no-hooks")
		if err := c.Get(ctx, client.ObjectKey{Namespace: "kruise-system", Name: "kruise-controller-manager"}, dep); !apierrors.IsNotFound(err) {
			t.Errorf("manager Deployment after uninstall: %v, want NotFound", err)
		}
		if n := len(ourCRDs(t)); n != 18 {
			t.Errorf("CRDs after uninstall: %d, want all 18 kept", n)
		}
	})
}

func valuesArgs(files []string) [][]string {
	var out [][]string
	for _, f := range files {
		out = append(out, []string{"-f", f})
	}
	return out
}

func stringData(d map[string][]byte) map[string]string {
	out := map[string]string{}
	for k, v := range d {
		out[k] = string(v)
	}
	return out
}

func mustGet(t *testing.T, key client.ObjectKey, obj client.Object) {
	t.Helper()
	if err := env.Client.Get(t.Context(), key, obj); err != nil {
		t.Fatalf("get %T %s: %v", obj, key, err)
	}
}

func assertRelease(t *testing.T, h *helmCLI, wantRevision int, wantStatus string) {
	t.Helper()
	var st struct {
		Version int `json:"version"`
		Info    struct {
			Status string `json:"status"`
		} `json:"info"`
	}
	out := h.mustRun(t, "status", "kruise", "-n", "kruise-system", "-o", "json")
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("helm status: %v\n%s", err, out)
	}
	if d := cmp.Diff([]any{wantRevision, wantStatus}, []any{st.Version, st.Info.Status}); d != "" {
		t.Errorf("release revision and status (-want +got):\n%s", d)
	}
}

func ourCRDs(t *testing.T) []apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var list apiextensionsv1.CustomResourceDefinitionList
	if err := env.Client.List(t.Context(), &list); err != nil {
		t.Fatalf("list CRDs: %v", err)
	}
	var out []apiextensionsv1.CustomResourceDefinition
	for _, c := range list.Items {
		if c.Spec.Group == "apps.kruise.io" || c.Spec.Group == "policy.kruise.io" {
			out = append(out, c)
		}
	}
	return out
}

// removePreinstalledCRDs deletes the CRDs the test bed installs, so that helm meets a cluster
// without the add-on, as CI users' clusters are; otherwise helm refuses to adopt them.
func removePreinstalledCRDs(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	for _, crd := range ourCRDs(t) {
		// Deleting a CRD whose storage is still initialising makes the apiserver's cleanup fail
		// ("storage is (re)initializing") and back off for minutes; a successful list first
		// means the storage is up.
		waitForStorage(t, crd)
		if err := env.Client.Delete(ctx, &crd); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("delete CRD %s: %v", crd.Name, err)
		}
	}
	err := framework.PollUntil(ctx, crdsGoneTimeout, func(context.Context) error {
		return framework.Want(len(ourCRDs(t)) == 0, "CRDs left")
	})
	if err != nil {
		var left []string
		for _, crd := range ourCRDs(t) {
			left = append(left, fmt.Sprintf("%s finalizers=%v conditions=%v", crd.Name, crd.Finalizers, crd.Status.Conditions))
		}
		t.Fatalf("pre-installed CRDs still present after %s: %v\n%s", crdsGoneTimeout, err, strings.Join(left, "\n"))
	}
}

// waitForStorage waits until objects of the CRD's kind can be listed.
func waitForStorage(t *testing.T, crd apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	version := crd.Spec.Versions[0].Name
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			version = v.Name
		}
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.ListKind})
	framework.Eventually(t, crdsGoneTimeout, "objects of CRD "+crd.Name+" can be listed", func(ctx context.Context) error {
		return env.Client.List(ctx, list)
	})
}
