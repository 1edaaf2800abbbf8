package manager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// testPath is where the test's admission handler is served.
const testPath = "/validate-test-configmap"

// denyLabelled refuses ConfigMaps labelled deny=true and counts every request.
type denyLabelled struct{ calls atomic.Int32 }

func (d *denyLabelled) webhooks() setup.Webhooks {
	return func(ctrl.Manager, setup.Deps) map[string]admission.Handler {
		return map[string]admission.Handler{
			testPath: admission.HandlerFunc(func(_ context.Context, req admission.Request) admission.Response {
				d.calls.Add(1)
				if strings.Contains(string(req.Object.Raw), `"deny":"true"`) {
					return admission.Denied("refused by the test handler")
				}
				return admission.Allowed("")
			}),
		}
	}
}

// testWebhook sends ConfigMaps labelled test=admission to testPath; the manager's patcher
// fills in its URL and CA.
func testWebhook(ns string) admissionregistrationv1.ValidatingWebhook {
	none := admissionregistrationv1.SideEffectClassNone
	return admissionregistrationv1.ValidatingWebhook{
		Name: "vtestconfigmap.kb.io",
		ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: ns, Name: configuration.ServiceName, Path: ptr.To(testPath), Port: ptr.To[int32](443),
		}},
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
		}},
		FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
		SideEffects:             &none,
		AdmissionReviewVersions: []string{"v1"},
		ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"test": "admission"}},
	}
}

// managerUser is a service-account user with every permission the manager needs except the
// Secret, which grantSecrets adds.
func managerUser(t *testing.T, ns string) *rest.Config {
	t.Helper()
	user := "system:serviceaccount:" + ns + ":kruise-manager"
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "test-" + ns},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"*"}},
			{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"*"}},
			{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"}, Verbs: []string{"get", "list", "watch", "patch", "update"}},
			{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch", "patch", "update"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "test-" + ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
	}
	for _, obj := range []client.Object{role, binding} {
		framework.Create(t, env.Client, obj)
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return cfg
}

func grantSecrets(t *testing.T, ns string) {
	t.Helper()
	user := "system:serviceaccount:" + ns + ":kruise-manager"
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "webhook-certs"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "create", "update"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "webhook-certs"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
	}
	for _, obj := range []client.Object{role, binding} {
		framework.Create(t, env.Client, obj)
	}
}

func TestReadinessAdmissionAndMetrics(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "serving-", nil)
	o := testOptions(t, ns)
	handler := &denyLabelled{}
	o.Webhooks = []setup.Webhooks{handler.webhooks()}
	installConfigurations(t, configuration.Target{Namespace: ns}, testWebhook(ns))
	startManager(t, managerUser(t, ns), o)

	t.Run("readyz fails while the webhook cannot get its certificates", func(t *testing.T) {
		// 500 while the webhook does not serve.
		waitReadyz(t, o, http.StatusInternalServerError, "/readyz answers")
		if conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", o.WebhookPort)); err == nil {
			_ = conn.Close()
			t.Fatal("the webhook port accepts connections before the certificates exist")
		}
		if _, err := secret(ns); err == nil {
			t.Fatal("the Secret exists although the manager may not write it")
		}
	})

	t.Run("readyz passes once the webhook serves", func(t *testing.T) {
		grantSecrets(t, ns)
		waitReady(t, o)
		if _, err := secret(ns); err != nil {
			t.Fatalf("ready without the Secret: %v", err)
		}
	})

	t.Run("an admission request through the apiserver reaches the handler", func(t *testing.T) {
		ctx := context.Background()
		// The apiserver may call the webhook before the patcher gave it the CA; a refusal
		// for that reason is retried, a refusal by the handler is what we wait for.
		framework.Eventually(t, framework.Medium, "the handler refuses a labelled ConfigMap", func(context.Context) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "denied-",
				Labels: map[string]string{"test": "admission", "deny": "true"}}}
			err := env.Client.Create(ctx, cm)
			if err == nil {
				return errors.New("created, want refused")
			}
			if !strings.Contains(err.Error(), "refused by the test handler") {
				return err
			}
			return nil
		})
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "allowed",
			Labels: map[string]string{"test": "admission"}}}
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatalf("an allowed ConfigMap was refused: %v", err)
		}
		if handler.calls.Load() < 2 {
			t.Errorf("the handler saw %d requests, want at least 2", handler.calls.Load())
		}
	})

	t.Run("webhooks this manager does not serve are dropped from the configurations", func(t *testing.T) {
		framework.Eventually(t, framework.Medium, "only the test webhook is left", func(context.Context) error {
			m := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := env.Client.Get(context.Background(), client.ObjectKey{Name: configuration.MutatingName}, m); err != nil {
				return err
			}
			v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := env.Client.Get(context.Background(), client.ObjectKey{Name: configuration.ValidatingName}, v); err != nil {
				return err
			}
			var names []string
			for _, w := range m.Webhooks {
				names = append(names, w.Name)
			}
			for _, w := range v.Webhooks {
				names = append(names, w.Name)
			}
			if len(names) != 1 || names[0] != "vtestconfigmap.kb.io" {
				return fmt.Errorf("webhooks %v, want only vtestconfigmap.kb.io", names)
			}
			return nil
		})
	})

	t.Run("the profiles are served on --pprof-addr", func(t *testing.T) {
		code, body, err := httpGet("http://" + o.PprofAddr + "/debug/pprof/heap?debug=1")
		if err != nil {
			t.Fatal(err)
		}
		if code != http.StatusOK || !strings.Contains(body, "heap profile") {
			t.Fatalf("/debug/pprof/heap: %d, %.80q", code, body)
		}
	})

	t.Run("the metrics endpoint serves the webhook latency histogram", func(t *testing.T) {
		code, body, err := httpGet("http://" + o.MetricsAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		if code != http.StatusOK {
			t.Fatalf("/metrics: %d", code)
		}
		for _, want := range []string{
			`kruise_webhook_duration_seconds_count{allowed="false",path="` + testPath + `"}`,
			`kruise_webhook_duration_seconds_count{allowed="true",path="` + testPath + `"}`,
			`kruise_webhook_duration_seconds_bucket{allowed="true",path="` + testPath + `",le="0.005"}`,
			`controller_runtime_reconcile_total{controller="webhook-configuration"`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})
}
