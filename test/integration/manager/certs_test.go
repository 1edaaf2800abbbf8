package manager

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/certs"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// conversionCRD is a CRD of ours with two versions, switched to Webhook conversion for a test.
const conversionCRD = "statefulsets.apps.kruise.io"

func servingCert(t *testing.T, s *corev1.Secret) (serial string, notAfter time.Time) {
	t.Helper()
	c, err := certs.ParseCert(s.Data["cert.pem"])
	if err != nil {
		t.Fatal(err)
	}
	return c.SerialNumber.String(), c.NotAfter
}

// switchToWebhookConversion points the CRD's conversion at a placeholder webhook without a
// CA, as a chart would render it, and restores strategy None when the test ends.
func switchToWebhookConversion(t *testing.T, ns string) {
	t.Helper()
	set := func(conv *apiextensionsv1.CustomResourceConversion) {
		framework.Change(t, env.Client, client.ObjectKey{Name: conversionCRD}, func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Conversion = conv
		})
	}
	set(&apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ConversionReviewVersions: []string{"v1"},
			ClientConfig: &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{
				Namespace: ns, Name: configuration.ServiceName, Path: ptr.To("/convert"), Port: ptr.To[int32](443),
			}},
		},
	})
	t.Cleanup(func() { set(&apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}) })
}

// patchedEverywhere checks that every webhook of both configurations and the CRD's conversion
// carry ca and point at the manager's URL.
func patchedEverywhere(ca []byte, port int) error { return patched(ca, port, true) }

// patchedConfigurations is patchedEverywhere without the CRD.
func patchedConfigurations(ca []byte, port int) error { return patched(ca, port, false) }

// waitRenewed waits until the Secret in ns holds a serving certificate of another serial number
// than old, and returns it; what names the wait.
func waitRenewed(t *testing.T, ns, old, what string) *corev1.Secret {
	t.Helper()
	var s *corev1.Secret
	framework.Eventually(t, framework.Medium, what, func(context.Context) error {
		var err error
		if s, err = secret(ns); err != nil {
			return err
		}
		serial, _ := servingCert(t, s)
		return framework.Want(serial != old, "still the certificate of serial "+old)
	})
	return s
}

func patched(ca []byte, port int, withCRD bool) error {
	ctx := context.Background()
	var errs []error
	check := func(what string, cc admissionregistrationv1.WebhookClientConfig) {
		if !bytes.Equal(cc.CABundle, ca) {
			errs = append(errs, fmt.Errorf("%s: caBundle is not the Secret's CA", what))
		}
		if cc.URL == nil || !bytes.HasPrefix([]byte(*cc.URL), []byte(configuration.URL("127.0.0.1", port, "/"))) {
			errs = append(errs, fmt.Errorf("%s: url %v", what, ptr.Deref(cc.URL, "<nil>")))
		}
	}
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: configuration.MutatingName}, m); err != nil {
		return err
	}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: configuration.ValidatingName}, v); err != nil {
		return err
	}
	// The manager here serves every webhook of the table.
	configs := map[string][]admissionregistrationv1.WebhookClientConfig{}
	for _, w := range m.Webhooks {
		configs["mutating"] = append(configs["mutating"], w.ClientConfig)
		check(w.Name, w.ClientConfig)
	}
	for _, w := range v.Webhooks {
		configs["validating"] = append(configs["validating"], w.ClientConfig)
		check(w.Name, w.ClientConfig)
	}
	table := configuration.Webhooks()
	for kind, want := range map[string]int{"mutating": len(table.Mutating), "validating": len(table.Validating)} {
		if got := len(configs[kind]); got != want {
			errs = append(errs, fmt.Errorf("%d %s webhooks, want the table's %d", got, kind, want))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if !withCRD {
		return nil
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: conversionCRD}, crd); err != nil {
		return err
	}
	cc := crd.Spec.Conversion.Webhook.ClientConfig
	if !bytes.Equal(cc.CABundle, ca) || ptr.Deref(cc.URL, "") != configuration.URL("127.0.0.1", port, "/convert") || cc.Service != nil {
		errs = append(errs, fmt.Errorf("crd conversion: url %v, service %v, caBundle matches %t",
			ptr.Deref(cc.URL, "<nil>"), cc.Service, bytes.Equal(cc.CABundle, ca)))
	}
	return errors.Join(errs...)
}

func TestCertificatesRenewedAtStartAndPatchedEverywhere(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "certs-", nil)
	o := testOptions(t, ns)
	o.Webhooks = manager.NewOptions().Webhooks
	// Watches restricted to one namespace still see the cluster-scoped configurations and CRDs.
	o.Namespace = ns

	// A bundle from an earlier run whose serving certificate expires inside the default
	// renewal margin (30 days), with a CA that is still good.
	hosts := append(certs.ServiceHosts(configuration.ServiceName, ns), "127.0.0.1")
	seeded, err := certs.NewBundle(hosts, time.Now(), 10*365*24*time.Hour, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	seed := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: certs.SecretName}, Data: seeded.SecretData()}
	framework.Create(t, env.Client, seed)
	oldSerial, oldNotAfter := servingCert(t, seed)

	installConfigurations(t, configuration.Target{Namespace: ns})
	switchToWebhookConversion(t, ns)
	startManager(t, env.Config, o)
	waitReady(t, o)

	s := waitRenewed(t, ns, oldSerial, "serving certificate renewed")
	_, notAfter := servingCert(t, s)
	if !notAfter.After(oldNotAfter.Add(300 * 24 * time.Hour)) {
		t.Errorf("renewed certificate expires %s, want about a year after the seeded %s", notAfter, oldNotAfter)
	}
	if diff := cmp.Diff(string(seeded.CACert), string(s.Data["ca-cert.pem"])); diff != "" {
		t.Errorf("the CA was still good and should have been kept (-want +got):\n%s", diff)
	}
	gotKeys := []string{}
	for k := range s.Data {
		gotKeys = append(gotKeys, k)
	}
	if diff := cmp.Diff([]string{"ca-cert.pem", "ca-key.pem", "cert.pem", "key.pem", "tls.crt", "tls.key"}, certs.SortedHosts(gotKeys)); diff != "" {
		t.Errorf("secret keys (-want +got):\n%s", diff)
	}
	if !bytes.Equal(s.Data["tls.crt"], s.Data["cert.pem"]) || !bytes.Equal(s.Data["tls.key"], s.Data["key.pem"]) {
		t.Error("tls.crt/tls.key differ from cert.pem/key.pem")
	}
	if d := certs.Decide(certs.FromSecretData(s.Data), hosts, time.Now(), 30*24*time.Hour); d.Action != certs.Keep {
		t.Errorf("the renewed bundle still needs %s: %s", d.Action, d.Reason)
	}
	onDisk, err := os.ReadFile(filepath.Join(o.WebhookCertDir, "tls.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(onDisk, s.Data["cert.pem"]) {
		t.Error("the cert dir does not hold the Secret's serving certificate")
	}

	framework.Eventually(t, framework.Medium, "caBundle and URL patched into both configurations and the CRD", func(context.Context) error {
		return patchedEverywhere(s.Data["ca-cert.pem"], o.WebhookPort)
	})
}

// servedSerial is the serial number of the certificate the webhook server presents.
func servedSerial(port int) (string, error) {
	conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		return "", err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
}

func TestCertificateRenewedWhileRunning(t *testing.T) {
	cases := map[string]struct {
		policy    certs.Policy
		wantNewCA bool
	}{
		// Issued at t0, the serving certificate expires at t0+2h and is due at t0+1h; its
		// successor, issued at t0+1h, is backdated to t0 and so valid for the real apiserver.
		"a serving certificate due for renewal is reissued under the same CA": {
			policy: certs.Policy{CAValidity: 10 * 365 * 24 * time.Hour, Validity: 2 * time.Hour, RenewBefore: time.Hour, CheckInterval: time.Minute},
		},
		// The CA expires at t0+2h and is due at t0+1h: everything is made again and the
		// configurations get the new CA.
		"a CA due for renewal is replaced and the new CA patched in": {
			policy:    certs.Policy{CAValidity: 2 * time.Hour, Validity: 90 * time.Minute, RenewBefore: time.Hour, CheckInterval: time.Minute},
			wantNewCA: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := framework.NewNamespace(t, env.Client, "renew-", nil)
			o := testOptions(t, ns)
			clk := clocktesting.NewFakeClock(time.Now())
			o.Clock = clk
			o.CertPolicy = tc.policy
			o.Webhooks = manager.NewOptions().Webhooks
			installConfigurations(t, configuration.Target{Namespace: ns})
			startManager(t, env.Config, o)
			waitReady(t, o)

			first, err := secret(ns)
			if err != nil {
				t.Fatal(err)
			}
			firstSerial, _ := servingCert(t, first)
			framework.Eventually(t, framework.Medium, "the rotator waits on the clock", func(context.Context) error {
				if !clk.HasWaiters() {
					return errors.New("no timer on the fake clock yet")
				}
				return nil
			})
			clk.Step(time.Hour)

			s := waitRenewed(t, ns, firstSerial, "serving certificate renewed at the step")
			newSerial, notAfter := servingCert(t, s)
			wantNotAfter := clk.Now().Add(tc.policy.Validity)
			if diff := cmp.Diff(wantNotAfter.Truncate(time.Second), notAfter.Truncate(time.Second)); diff != "" {
				t.Errorf("renewed certificate's expiry (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNewCA, !bytes.Equal(first.Data["ca-cert.pem"], s.Data["ca-cert.pem"])); diff != "" {
				t.Errorf("CA replaced (-want +got):\n%s", diff)
			}
			framework.Eventually(t, framework.Medium, "the server presents the renewed certificate", func(context.Context) error {
				got, err := servedSerial(o.WebhookPort)
				if err != nil {
					return err
				}
				if got != newSerial {
					return fmt.Errorf("serves serial %s, want %s", got, newSerial)
				}
				return nil
			})
			framework.Eventually(t, framework.Medium, "the configurations carry the Secret's CA", func(context.Context) error {
				return patchedConfigurations(s.Data["ca-cert.pem"], o.WebhookPort)
			})
		})
	}
}

// TestManagersStartingTogetherShareOneSecret starts three managers at once on a namespace
// without a Secret: whichever creates it, all of them end up serving its certificate.
func TestManagersStartingTogetherShareOneSecret(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "shared-", nil)
	var all []*manager.Options
	for range 3 {
		o := testOptions(t, ns)
		all = append(all, o)
		startManager(t, env.Config, o)
	}
	for _, o := range all {
		waitReady(t, o)
	}
	s, err := secret(ns)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range all {
		onDisk, err := os.ReadFile(filepath.Join(o.WebhookCertDir, "tls.crt"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(onDisk, s.Data["cert.pem"]) {
			t.Errorf("manager %d serves a certificate other than the Secret's", i)
		}
		serial, err := servedSerial(o.WebhookPort)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := servingCert(t, s); serial != want {
			t.Errorf("manager %d presents serial %s, want the Secret's %s", i, serial, want)
		}
	}
}
