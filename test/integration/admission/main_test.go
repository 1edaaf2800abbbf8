package admission

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	csadmission "github.com/kruise-addon/kruise-addon/controllers/webhook/cloneset"
	podadmission "github.com/kruise-addon/kruise-addon/controllers/webhook/pod"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// These are set once in TestMain and only read afterwards.
var (
	env *framework.Env
	sim *framework.NodeSimulator
)

const (
	// serveTimeout bounds the wait for the webhook server to answer TLS.
	serveTimeout = 30 * time.Second
	// registerTimeout bounds the wait for the apiserver to start calling new configurations.
	registerTimeout = 30 * time.Second
	// stateTimeout bounds every wait for the world to reach a state in a test.
	stateTimeout = 30 * time.Second
	pollInterval = 100 * time.Millisecond

	testNodeName = "admission-node-1"
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctrl.SetLogger(klog.NewKlogr())
	var err error
	env, err = framework.Start(framework.WithSchemeAdder(apis.AddToScheme))
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the control plane: %v\n", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
		}
	}()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopManager, err := startAdmission(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the admission server: %v\n", err)
		return 1
	}
	defer stopManager()

	sim, err = framework.StartNodeSimulator(ctx, env, framework.WithNodes(builder.Node(testNodeName).Obj()))
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the node simulator: %v\n", err)
		return 1
	}
	defer sim.Stop()
	return m.Run()
}

// startAdmission runs a manager with the handlers and the readiness controller, registers the
// webhook configurations, and waits until the apiserver calls them. The returned func stops
// the manager and waits for it.
func startAdmission(ctx context.Context) (func(), error) {
	dir, err := os.MkdirTemp("", "admission-certs-")
	if err != nil {
		return nil, fmt.Errorf("create cert dir: %w", err)
	}
	caPEM, err := writeServingCert(dir)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir}),
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	deps := setup.Deps{Gates: features.NewGate(), Workers: func(string) int { return 2 }, Clock: clock.RealClock{}}
	for _, hs := range []map[string]admission.Handler{csadmission.Handlers(mgr, deps), podadmission.Handlers(mgr, deps)} {
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
	if err := poll(ctx, serveTimeout, func() error { return started(&http.Request{}) }); err != nil {
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
	return poll(ctx, registerTimeout, func() error {
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

// writeServingCert writes tls.crt and tls.key for 127.0.0.1, signed by a CA made here, and
// returns the CA in PEM for the configurations' caBundle.
func writeServingCert(dir string) ([]byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate ca key: %w", err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "admission-test-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("sign ca: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("parse ca: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate serving key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("sign serving cert: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode serving key: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), certPEM, 0o600); err != nil {
		return nil, fmt.Errorf("write cert: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), keyPEM, 0o600); err != nil {
		return nil, fmt.Errorf("write key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// poll calls f until it returns nil or timeout passes, then returns f's last error.
func poll(ctx context.Context, timeout time.Duration, f func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("after %s: %w", timeout, err)
		case <-t.C:
		}
	}
}
