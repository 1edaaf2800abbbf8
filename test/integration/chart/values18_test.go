package chart

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"helm.sh/helm/v3/pkg/chartutil"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// openKruiseCharts is a mirror of OpenKruise's chart repository, when the machine has one: the
// test then checks that testdata holds 1.8's default values unchanged.
const openKruiseCharts = "/work/.mirror/openkruise+charts/repo"

func values18File(t *testing.T, name string) string {
	t.Helper()
	return filepath.Join(repoRoot(t), "test", "integration", "chart", "testdata", name)
}

// leafPaths lists the dotted paths of every leaf of v (a list or an empty map is a leaf).
func leafPaths(prefix string, v any) []string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return []string{prefix}
	}
	var out []string
	for k, c := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		out = append(out, leafPaths(p, c)...)
	}
	sort.Strings(out)
	return out
}

// TestOpenKruise18ValuesFilesInstallUnchanged: 1.8.0's and 1.8.3's own default values files,
// and a file setting every key of them, pass `helm lint --strict` and install with the plain helm
// CLI. Only what the test bed needs is set beside them: the mirror's registry (the chart names
// none), and the test bed's CRDs, namespaces and a fresh daemon config namespace, so that the
// uninstall leaves nothing that needs kube-controller-manager.
func TestOpenKruise18ValuesFilesInstallUnchanged(t *testing.T) {
	files := []string{"openkruise-1.8.0-values.yaml", "openkruise-1.8.3-values.yaml", "openkruise-1.8-every-key-values.yaml"}
	t.Run("testdata holds 1.8's default values as they are", func(t *testing.T) {
		if _, err := os.Stat(openKruiseCharts); err != nil {
			t.Logf("no mirror of OpenKruise's charts at %s; comparing the every-key file with testdata only", openKruiseCharts)
		}
		for _, version := range []string{"1.8.0", "1.8.3"} {
			ours := readValues(t, values18File(t, "openkruise-"+version+"-values.yaml"))
			if _, err := os.Stat(openKruiseCharts); err == nil {
				out, err := exec.Command("git", "-C", openKruiseCharts, "show", "HEAD:versions/kruise/"+version+"/values.yaml").Output()
				if err != nil {
					t.Fatalf("git show %s values: %v", version, err)
				}
				theirs, err := chartutil.ReadValues(out)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(theirs.AsMap(), ours); d != "" {
					t.Errorf("testdata's %s values differ from 1.8's (-1.8 +testdata):\n%s", version, d)
				}
			}
			every := readValues(t, values18File(t, "openkruise-1.8-every-key-values.yaml"))
			have := map[string]bool{}
			for _, p := range leafPaths("", every) {
				have[p] = true
			}
			for _, p := range leafPaths("", ours) {
				if !have[p] && !slices.ContainsFunc(leafPaths("", every), func(l string) bool { return strings.HasPrefix(l, p+".") }) {
					t.Errorf("the every-key file lacks %s, a key of %s's values", p, version)
				}
			}
		}
	})

	h := newHelmCLI(t)
	dir := chartDir(t)
	for i, f := range files {
		t.Run(f, func(t *testing.T) {
			path := values18File(t, f)
			h.mustRun(t, "lint", "--strict", dir, "-f", path, "--set", "imageRegistry=mirror.example.com")
			cfg := fmt.Sprintf("kruise-daemon-config-18-%d", i)
			h.mustRun(t, "upgrade", "--install", "kruise", dir, "-n", "kruise-system", "--create-namespace", "-f", path,
				"--set", "imageRegistry=mirror.example.com",
				"--set", "crds.managed=false", "--set", "installation.createNamespace=false", "--set", "daemon.configNamespace="+cfg)
			assertRelease(t, h, 1, "deployed")
			var d appsv1.Deployment
			mustGet(t, client.ObjectKey{Namespace: "kruise-system", Name: "kruise-controller-manager"}, &d)
			if img := d.Spec.Template.Spec.Containers[0].Image; !strings.HasPrefix(img, "mirror.example.com/kruise-addon/kruise-manager:") {
				t.Errorf("the manager runs %s, want the add-on's manager from the mirror", img)
			}
			h.mustRun(t, "uninstall", "kruise", "-n", "kruise-system", "--no-hooks")
		})
	}
}

// TestOpenKruise18KeysKeepTheirMeaning: each key of 1.8's values.yaml that this chart names
// differently, or not at all, reaches the object 1.8's chart puts it in.
func TestOpenKruise18KeysKeepTheirMeaning(t *testing.T) {
	vals := readValues(t, values18File(t, "openkruise-1.8-every-key-values.yaml"))
	vals["imageRegistry"] = "mirror.example.com"
	r := mustRender(t, vals)
	mgr := find[*appsv1.Deployment](r.objects, "kruise-controller-manager").Spec.Template.Spec
	ds := find[*appsv1.DaemonSet](r.objects, "kruise-daemon").Spec.Template.Spec
	envOf := func(c corev1.Container) map[string]string {
		out := map[string]string{}
		for _, e := range c.Env {
			out[e.Name] = e.Value
		}
		return out
	}
	ports := map[string]int32{}
	for _, p := range mgr.Containers[0].Ports {
		ports[p.Name] = p.ContainerPort
	}
	var listGroups []string
	for _, cr := range all[*rbacv1.ClusterRole](r.objects) {
		for _, rule := range cr.Rules {
			if cmp.Equal(rule.Resources, []string{"*"}) && cmp.Equal(rule.Verbs, []string{"list"}) {
				listGroups = append(listGroups, rule.APIGroups...)
			}
		}
	}
	sa := map[string]string{}
	for _, s := range all[*corev1.ServiceAccount](r.objects) {
		sa[s.Name] = s.Annotations["iam.example.com/role"]
	}
	hookImage := ""
	for _, j := range all[*batchv1.Job](r.hooks) {
		hookImage = j.Spec.Template.Spec.Containers[0].Image
	}
	got := map[string]any{
		"manager args":  mgr.Containers[0].Args,
		"manager ports": ports,
		"manager env KUBE_CACHE_MUTATION_DETECTOR": envOf(mgr.Containers[0])["KUBE_CACHE_MUTATION_DETECTOR"],
		"manager node affinity":                    mgr.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Key,
		"daemon args":                              ds.Containers[0].Args,
		"daemon env":                               envOf(ds.Containers[0]),
		"roleListGroups":                           listGroups,
		"serviceAccount annotations":               sa,
		"helmHooks image":                          hookImage,
		"webhook service target port":              find[*corev1.Service](r.objects, "kruise-webhook-service").Spec.Ports[0].TargetPort.IntValue(),
	}
	want := map[string]any{
		"manager args": []string{
			"--enable-leader-election=true", "--leader-election-namespace=kruise-system",
			"--leader-election-lease-duration=15s", "--leader-election-renew-deadline=10s", "--leader-election-retry-period=1s",
			"--metrics-addr=:18080", "--health-probe-addr=:18000", "--webhook-port=19876",
			"--pprof-addr=127.0.0.1:18090", "--sync-period=10m",
			"--webhook-cert-dir=/tmp/kruise-webhook-certs", "--daemon-config-namespace=kruise-daemon-config",
			"--feature-gates=PodWebhook=true,ImagePullJobGate=true", "-v=5",
		},
		"manager ports": map[string]int32{"webhook": 19876, "metrics": 18080, "health": 18000},
		"manager env KUBE_CACHE_MUTATION_DETECTOR": "true",
		"manager node affinity":                    "node-role.example.com/system",
		"daemon args": []string{
			"--hostvarrun=/hostvarrun", "--socket-file=containerd/containerd.sock", "--addr=:10231",
			"--feature-gates=PodWebhook=true,ImagePullJobGate=true", "--max-workers-for-pull-image=2",
			"--daemon-config-namespace=kruise-daemon-config", "--enable-pprof=false", "--pprof-addr=127.0.0.1:10232", "-v=3",
		},
		"daemon env": map[string]string{
			"NODE_NAME": "", "KUBE_CACHE_MUTATION_DETECTOR": "true",
			"HTTPS_PROXY": "http://proxy.internal:3128", "NO_PROXY": "localhost,127.0.0.1,10.0.0.0/8,.svc,.cluster.local",
		},
		"roleListGroups":              []string{"apps.example.com"},
		"serviceAccount annotations":  map[string]string{"kruise-manager": "kruise", "kruise-daemon": "kruise"},
		"helmHooks image":             "mirror.example.com/kruise-addon/kruise-manager:v1.2.0", // imageRegistry replaces every registry
		"webhook service target port": 19876,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("where 1.8's keys land (-want +got):\n%s", d)
	}
}

// TestOpenKruise18KeysRefusedWithTheirReplacement: a 1.8 key and ours set to different values,
// or a 1.8 key asking for what the add-on does not do, fail the render with a message naming the
// key and what to set instead.
func TestOpenKruise18KeysRefusedWithTheirReplacement(t *testing.T) {
	cases := []struct {
		name string
		vals map[string]any
		want []string
	}{
		{"manager.log.level and manager.logLevel set differently", values("manager.log.level", "5", "manager.logLevel", 3),
			[]string{"manager.logLevel is 3 and manager.log.level is 5", "set only one of them"}},
		{"manager.webhook.port and manager.webhookPort set differently", values("manager.webhook.port", 9443, "manager.webhookPort", 9876),
			[]string{"manager.webhookPort is 9876 and manager.webhook.port is 9443"}},
		{"manager.metrics.port and manager.metricsPort set differently", values("manager.metrics.port", 8081, "manager.metricsPort", 8080),
			[]string{"manager.metricsPort is 8080 and manager.metrics.port is 8081"}},
		{"manager.healthProbe.port and manager.healthProbePort set differently", values("manager.healthProbe.port", 8001, "manager.healthProbePort", 8000),
			[]string{"manager.healthProbePort is 8000 and manager.healthProbe.port is 8001"}},
		{"daemon.log.level and daemon.logLevel set differently", values("daemon.log.level", "2", "daemon.logLevel", 4),
			[]string{"daemon.logLevel is 4 and daemon.log.level is 2"}},
		{"manager.nodeAffinity and manager.affinity.nodeAffinity set differently",
			values("manager.nodeAffinity", map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{"weight": 1, "preference": map[string]any{"matchExpressions": []any{map[string]any{"key": "a", "operator": "Exists"}}}}}},
				"manager.affinity", map[string]any{"nodeAffinity": map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{"weight": 1, "preference": map[string]any{"matchExpressions": []any{map[string]any{"key": "b", "operator": "Exists"}}}}}}}),
			[]string{"manager.affinity.nodeAffinity and manager.nodeAffinity", "set only one of them"}},
		{"helmHooks.image and hook.image set differently",
			values("helmHooks.image", map[string]any{"repository": "a.example.com/hook", "tag": "v1"}, "hook.image.repository", "other/hook"),
			[]string{"hook.image and helmHooks.image", "set only one of them"}},
		{"externalCerts.annotations set without EnableExternalCerts", values("externalCerts.annotations", map[string]any{"cert-manager.io/inject-ca-from": "kruise-system/kruise-webhook"}),
			[]string{"externalCerts.annotations: a CA injector's annotations are set, but featureGates does not turn EnableExternalCerts on", "add EnableExternalCerts=true to featureGates"}},
		{"manager.loggingFormat json", values("manager.loggingFormat", "json"),
			[]string{"manager.loggingFormat: json is not supported", "set it to text"}},
		{"daemon.credentialProvider.enable true", values("daemon.credentialProvider.enable", true),
			[]string{"daemon.credentialProvider.enable", "spec.pullSecrets", "set daemon.credentialProvider.enable to false"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.vals["imageRegistry"] = "mirror.example.com"
			_, err := render(t, tc.vals)
			if err == nil {
				t.Fatalf("rendered; want a refusal saying %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestExternalCertsRenderTheInjectorsAnnotationsAndNoSecret: with EnableExternalCerts on and
// 1.8's externalCerts.annotations, both webhook configurations carry the annotations (the CA
// injector reads them) and the chart renders no Secret kruise-webhook-certs (the issuer owns it);
// without the gate the chart renders the Secret and no annotations.
func TestExternalCertsRenderTheInjectorsAnnotationsAndNoSecret(t *testing.T) {
	inject := map[string]any{"cert-manager.io/inject-ca-from": "kruise-system/kruise-webhook"}
	cases := map[string]struct {
		vals            map[string]any
		wantAnnotations map[string]string
		wantSecret      bool
	}{
		"the issuer's certificate": {
			vals:            values("externalCerts.annotations", inject, "featureGates", "EnableExternalCerts=true"),
			wantAnnotations: map[string]string{"cert-manager.io/inject-ca-from": "kruise-system/kruise-webhook"},
		},
		"the manager's own certificate": {vals: values(), wantSecret: true},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc struct {
		vals            map[string]any
		wantAnnotations map[string]string
		wantSecret      bool
	}) {
		r := mustRender(t, tc.vals)
		secret, configs := false, 0
		for _, o := range r.objects {
			switch o.(type) {
			case *corev1.Secret:
				secret = secret || o.GetName() == "kruise-webhook-certs"
			case *admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration:
				configs++
				testkit.Diff(t, "annotations of "+o.GetName(), tc.wantAnnotations, o.GetAnnotations())
			}
		}
		testkit.Diff(t, "webhook configurations rendered", 2, configs)
		testkit.Diff(t, "Secret kruise-webhook-certs rendered", tc.wantSecret, secret)
	})
}
