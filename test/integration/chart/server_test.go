package chart

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// The console API server is off by default; on, it runs `kruise-addon serve` over TLS with its
// Secrets, bound to cluster-admin, for the cluster it runs in unless a clusters Secret is named.
func TestServerFromTheChart(t *testing.T) {
	off := mustRender(t, nil)
	for _, o := range off.objects {
		if strings.HasPrefix(o.GetName(), "kruise-addon-server") {
			t.Errorf("%T %s is rendered with server.enabled unset", o, o.GetName())
		}
	}

	if _, err := render(t, values("server.enabled", true)); err == nil || !strings.Contains(err.Error(), "/server/tlsSecret") || !strings.Contains(err.Error(), "/server/tokensSecret") {
		t.Errorf("server.enabled without its Secrets: %v, want the schema to name server.tlsSecret and server.tokensSecret", err)
	}

	on := mustRender(t, values("server.enabled", true, "server.tlsSecret", "api-tls", "server.tokensSecret", "api-tokens", "imageRegistry", "mirror.example.com"))
	d := find[*appsv1.Deployment](on.objects, "kruise-addon-server")
	if d == nil {
		t.Fatal("no server Deployment")
	}
	c := d.Spec.Template.Spec.Containers[0]
	wantArgs := []string{"serve", "--config=/etc/kruise-addon/clusters/clusters.yaml", "--tokens=/etc/kruise-addon/tokens/tokens.yaml",
		"--listen=:8443", "--tls-cert=/etc/kruise-addon/tls/tls.crt", "--tls-key=/etc/kruise-addon/tls/tls.key", "--audit-log=-"}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("server args (-want +got):\n%s", diff)
	}
	if want := "mirror.example.com/kruise-addon/kruise-addon:" + loadChart(t).Metadata.AppVersion; c.Image != want {
		t.Errorf("image %s, want %s", c.Image, want)
	}
	// The probes ask the server's own /readyz and /healthz, which need no token.
	probes := map[string]string{}
	for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p != nil && p.HTTPGet != nil {
			probes[name] = string(p.HTTPGet.Scheme) + " " + p.HTTPGet.Path + " " + p.HTTPGet.Port.String()
		}
	}
	if diff := cmp.Diff(map[string]string{"readiness": "HTTPS /readyz https", "liveness": "HTTPS /healthz https"}, probes); diff != "" {
		t.Errorf("server probes (-want +got):\n%s", diff)
	}
	secrets := map[string]string{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		switch {
		case v.Secret != nil:
			secrets[v.Name] = v.Secret.SecretName
		case v.ConfigMap != nil:
			secrets[v.Name] = "configmap " + v.ConfigMap.Name
		}
	}
	if diff := cmp.Diff(map[string]string{"tls": "api-tls", "tokens": "api-tokens", "clusters": "configmap kruise-addon-server-clusters"}, secrets); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}
	cm := find[*corev1.ConfigMap](on.objects, "kruise-addon-server-clusters")
	if cm == nil || !strings.Contains(cm.Data["clusters.yaml"], "inCluster: true") {
		t.Errorf("clusters ConfigMap %v, want inCluster: true", cm)
	}
	crb := find[*rbacv1.ClusterRoleBinding](on.objects, "kruise-addon-server")
	if crb == nil || crb.RoleRef.Name != "cluster-admin" || len(crb.Subjects) != 1 || crb.Subjects[0].Name != "kruise-addon-server" {
		t.Errorf("binding %v, want the server's ServiceAccount bound to cluster-admin", crb)
	}
	if svc := find[*corev1.Service](on.objects, "kruise-addon-server"); svc == nil || svc.Spec.Ports[0].Port != 8443 {
		t.Errorf("service %v, want port 8443", svc)
	}

	named := mustRender(t, values("server.enabled", true, "server.tlsSecret", "api-tls", "server.tokensSecret", "api-tokens", "server.clustersSecret", "fleet"))
	if find[*corev1.ConfigMap](named.objects, "kruise-addon-server-clusters") != nil {
		t.Error("a clusters ConfigMap is rendered although server.clustersSecret is set")
	}
}
