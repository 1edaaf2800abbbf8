package manager

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/certs"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// TestExternalCertsAreServedAndNeverWritten: with EnableExternalCerts on, the manager serves the
// certificate an issuer wrote into Secret kruise-webhook-certs (ca.crt, tls.crt, tls.key, as
// cert-manager writes them), never writes that Secret or a caBundle, and is ready only once
// the issuer's CA injector put the CA into every served webhook; the apiserver then reaches
// the webhooks through that CA.
func TestExternalCertsAreServedAndNeverWritten(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "external-certs-", nil)
	ctx := context.Background()
	o := testOptions(t, ns)
	o.Webhooks = manager.NewOptions().Webhooks
	if err := o.Gates.Set("EnableExternalCerts=true"); err != nil {
		t.Fatal(err)
	}
	installConfigurations(t, configuration.Target{Namespace: ns})
	startManager(t, env.Config, o)
	waitReadyz(t, o, http.StatusInternalServerError, "not ready while the issuer's Secret is missing")

	// The issuer's certificate, in cert-manager's Secret layout.
	issued, err := certs.NewBundle(append(certs.ServiceHosts(configuration.ServiceName, ns), "127.0.0.1"), time.Now(), 24*time.Hour, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	framework.Create(t, env.Client, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: certs.SecretName},
		Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"ca.crt": issued.CACert, corev1.TLSCertKey: issued.Cert, corev1.TLSPrivateKeyKey: issued.Key}})
	cert, err := certs.ParseCert(issued.Cert)
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, framework.Medium, "the issuer's certificate served", func(context.Context) error {
		serial, err := servedSerial(o.WebhookPort)
		if err != nil {
			return err
		}
		return framework.Want(serial == cert.SerialNumber.String(), "serving serial "+serial)
	})
	// Served, but the apiserver cannot verify it yet: the caBundles are still empty.
	waitReadyz(t, o, http.StatusInternalServerError, "not ready while no caBundle holds the issuer's CA")

	// The CA injector's part.
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	framework.Change(t, env.Client, client.ObjectKey{Name: configuration.MutatingName}, func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
		for i := range c.Webhooks {
			c.Webhooks[i].ClientConfig.CABundle = issued.CACert
		}
	})
	framework.Change(t, env.Client, client.ObjectKey{Name: configuration.ValidatingName}, func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
		for i := range c.Webhooks {
			c.Webhooks[i].ClientConfig.CABundle = issued.CACert
		}
	})
	waitReady(t, o)

	// The apiserver reaches a webhook through the issuer's CA (once the leader pointed the
	// configurations at this manager's URL; the test's manager runs in host mode).
	framework.Eventually(t, framework.Medium, "an ImagePullJob denied by vimagepulljob.kb.io", func(ctx context.Context) error {
		job := &appsv1alpha1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "through-the-issuers-ca"},
			Spec: appsv1alpha1.ImagePullJobSpec{Image: "registry.example.com/app::v1"}}
		job.Spec.CompletionPolicy.Type = appsv1alpha1.Always
		err := env.Client.Create(ctx, job)
		return framework.Want(err != nil && strings.Contains(err.Error(), `admission webhook "vimagepulljob.kb.io" denied the request`),
			fmt.Sprintf("create: %v", err))
	})

	// Nothing of the issuer's was written over.
	s, err := secret(ns)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range s.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	testkit.Diff(t, "keys of the issuer's Secret", []string{"ca.crt", "tls.crt", "tls.key"}, keys)
	testkit.Diff(t, "tls.crt of the issuer's Secret", string(issued.Cert), string(s.Data[corev1.TLSCertKey]))
	if err := env.Client.Get(ctx, client.ObjectKey{Name: configuration.MutatingName}, m); err != nil {
		t.Fatal(err)
	}
	for _, w := range m.Webhooks {
		testkit.Diff(t, "caBundle of "+w.Name, string(issued.CACert), string(w.ClientConfig.CABundle))
	}
}

// TestAManagerIsReadyOnlyOnceTheWebhookConfigurationsCarryItsCA: as 1.8, a manager with its own
// certificate is ready only once the apiserver can verify it, i.e. every served webhook carries
// its CA, so that `helm install --wait` returns when the add-on's objects can be created. Here
// another pod holds the Lease, so the leader's writing of the caBundles is the test's to do.
func TestAManagerIsReadyOnlyOnceTheWebhookConfigurationsCarryItsCA(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "ready-ca-", nil)
	leaseHeldForAnHour(t, ns, "kruise-controller-manager-other")
	o := testOptions(t, ns)
	o.Webhooks = manager.NewOptions().Webhooks
	installConfigurations(t, configuration.Target{Namespace: ns})
	startManager(t, env.Config, o)
	var ca []byte
	framework.Eventually(t, framework.Medium, "the manager's certificate in its Secret", func(context.Context) error {
		s, err := secret(ns)
		if err != nil {
			return err
		}
		ca = s.Data[certs.CACertKey]
		return framework.Want(len(ca) > 0, "no "+certs.CACertKey)
	})
	waitReadyz(t, o, http.StatusInternalServerError, "not ready while no caBundle holds its CA")

	// The leader's part.
	framework.Change(t, env.Client, client.ObjectKey{Name: configuration.MutatingName}, func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
		for i := range c.Webhooks {
			c.Webhooks[i].ClientConfig.CABundle = ca
		}
	})
	framework.Change(t, env.Client, client.ObjectKey{Name: configuration.ValidatingName}, func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
		for i := range c.Webhooks {
			c.Webhooks[i].ClientConfig.CABundle = ca
		}
	})
	waitReady(t, o)
}
