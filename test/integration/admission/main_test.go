package admission

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	csadmission "github.com/kruise-addon/kruise-addon/controllers/webhook/cloneset"
	podadmission "github.com/kruise-addon/kruise-addon/controllers/webhook/pod"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// These are set once in TestMain and only read afterwards.
var (
	env *framework.Env
	sim *framework.NodeSimulator
)

const testNodeName = "admission-node-1"

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{
		Name:  "admission",
		Nodes: []*corev1.Node{builder.Node(testNodeName).Obj()},
		Setup: func(ctx context.Context, s *harness.Shared) (func(), error) {
			env, sim = s.Env, s.Sim
			stop, err := startAdmission(ctx)
			if err != nil {
				return nil, fmt.Errorf("starting the admission server: %w", err)
			}
			return stop, nil
		},
	}))
}

// startAdmission runs a manager with the handlers and the readiness controller, registers the
// webhook configurations, and waits until the apiserver calls them. The returned func stops
// the manager and waits for it.
func startAdmission(ctx context.Context) (func(), error) {
	dir, err := os.MkdirTemp("", "admission-certs-")
	if err != nil {
		return nil, fmt.Errorf("create cert dir: %w", err)
	}
	caPEM, err := harness.WriteServingCert(dir)
	if err != nil {
		return nil, err
	}
	ports, err := framework.FreePorts(1)
	if err != nil {
		return nil, fmt.Errorf("find a free port: %w", err)
	}
	port := ports[0]
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir}),
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	// Deletion protection is off by default, as in 1.8; the suite checks it, so it turns it on.
	gates := features.NewGate()
	if err := gates.Set("ResourcesDeletionProtection=true"); err != nil {
		return nil, err
	}
	deps := setup.Deps{Gates: gates, Workers: func(string) int { return 2 }, Clock: clock.RealClock{}}
	for _, hs := range []map[string]admission.Handler{csadmission.Handlers(mgr, deps), podadmission.Handlers()(mgr, deps)} {
		for path, h := range hs {
			mgr.GetWebhookServer().Register(path, &webhook.Admission{Handler: h})
		}
	}
	if err := podreadiness.SetupWithManager(mgr, deps); err != nil {
		return nil, err
	}

	mctx, mcancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	stop := func() {
		mcancel()
		if err := <-done; err != nil {
			fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		}
		_ = os.RemoveAll(dir)
	}
	fail := func(err error) (func(), error) { stop(); return nil, err }

	started := mgr.GetWebhookServer().StartedChecker()
	if err := framework.PollUntil(ctx, framework.Medium, func(context.Context) error { return started(&http.Request{}) }); err != nil {
		return fail(fmt.Errorf("webhook server never served: %w", err))
	}
	base := fmt.Sprintf("https://127.0.0.1:%d", port)
	if err := env.Client.Create(ctx, mutatingConfig(base, caPEM)); err != nil {
		return fail(fmt.Errorf("create mutating configuration: %w", err))
	}
	if err := env.Client.Create(ctx, validatingConfig(base, caPEM)); err != nil {
		return fail(fmt.Errorf("create validating configuration: %w", err))
	}
	if err := waitUntilCalled(ctx); err != nil {
		return fail(err)
	}
	return stop, nil
}

// waitUntilCalled probes with a dry-run CloneSet the schema accepts and only the webhook
// refuses, until the apiserver refuses it: then its webhook informer has both configurations.
func waitUntilCalled(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "admission-probe"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		return fmt.Errorf("create probe namespace: %w", err)
	}
	return framework.PollUntil(ctx, framework.Medium, func(context.Context) error {
		probe := kinds.CloneSet("probe", ns.Name).MaxUnavailable(intstr.FromInt32(0)).MaxSurge(intstr.FromInt32(0)).Obj()
		err := env.Client.Create(ctx, probe, client.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "vcloneset.kb.io") {
			return fmt.Errorf("the apiserver does not call the validating webhook yet (create: %v)", err)
		}
		return nil
	})
}

func mutatingConfig(base string, ca []byte) *admissionregistrationv1.MutatingWebhookConfiguration {
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "kruise-mutating-webhook-configuration"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			hookM("mcloneset.kb.io", base+csadmission.MutatingPath, ca, "clonesets", "apps.kruise.io", "v1alpha1",
				admissionregistrationv1.Create, admissionregistrationv1.Update),
			hookM("mpod.kb.io", base+podadmission.MutatingPath, ca, "pods", "", "v1", admissionregistrationv1.Create),
		},
	}
}

func validatingConfig(base string, ca []byte) *admissionregistrationv1.ValidatingWebhookConfiguration {
	h := hookM("vcloneset.kb.io", base+csadmission.ValidatingPath, ca, "clonesets", "apps.kruise.io", "v1alpha1",
		admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete)
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "kruise-validating-webhook-configuration"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: h.Name, ClientConfig: h.ClientConfig, Rules: h.Rules, FailurePolicy: h.FailurePolicy,
			SideEffects: h.SideEffects, AdmissionReviewVersions: h.AdmissionReviewVersions,
			NamespaceSelector: h.NamespaceSelector, TimeoutSeconds: h.TimeoutSeconds,
		}},
	}
}

// hookM builds a webhook that fails closed, so that a handler that is not called fails the
// suite instead of passing it, and that skips kube-system like the shipped pod webhooks.
func hookM(name, url string, ca []byte, resource, group, version string, ops ...admissionregistrationv1.OperationType) admissionregistrationv1.MutatingWebhook {
	return admissionregistrationv1.MutatingWebhook{
		Name:                    name,
		ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(url), CABundle: ca},
		FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1", "v1beta1"},
		TimeoutSeconds:          ptr.To[int32](10),
		NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"},
		}}},
		Rules: []admissionregistrationv1.RuleWithOperations{{
			Operations: ops,
			Rule: admissionregistrationv1.Rule{
				APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource},
				Scope: ptr.To(admissionregistrationv1.NamespacedScope),
			},
		}},
	}
}
