package manager

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"testing"
	"time"

	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/webhook"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// TestDefaultComponentsServeEveryTablePath starts a manager with the components of
// components.go (and the gates of gated handler sets on) and checks that each webhook of the table, in each form of its path, and
// /convert are answered by a handler (a 404 would mean the table lists a webhook nobody serves).
func TestDefaultComponentsServeEveryTablePath(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "components-", nil)
	o := testOptions(t, ns)
	defaults := manager.NewOptions()
	o.Controllers, o.Webhooks = defaults.Controllers, defaults.Webhooks
	// The ResourceDistribution webhook is served only with its gate on (1.8's default is off).
	if err := o.Gates.Set("ResourceDistributionGate=true"); err != nil {
		t.Fatal(err)
	}
	startManager(t, env.Config, o)
	waitReady(t, o)

	hc := webhookClient(t, ns)

	paths := []string{webhook.ConvertPath}
	for _, p := range configuration.Webhooks().Paths() {
		paths = append(paths, webhook.PathForms(p)...)
	}
	// The probe itself must tell "no handler" apart.
	resp, err := hc.Post(configuration.URL("127.0.0.1", o.WebhookPort, "/mutate-nothing"), "application/json", bytes.NewBufferString(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("POST /mutate-nothing: %d, want 404", resp.StatusCode)
	}
	for _, p := range paths {
		t.Run(p, func(t *testing.T) {
			url := configuration.URL("127.0.0.1", o.WebhookPort, p)
			// An empty review is a bad request to a handler, and a 404 to no handler.
			resp, err := hc.Post(url, "application/json", bytes.NewBufferString(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusNotFound {
				t.Errorf("POST %s: 404, no handler serves this table path", p)
			}
		})
	}
}

// webhookClient is an HTTP client that trusts the CA of the manager's certificate Secret in ns.
func webhookClient(t *testing.T, ns string) *http.Client {
	t.Helper()
	s, err := secret(ns)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.Data["ca-cert.pem"]) {
		t.Fatal("ca-cert.pem holds no certificate")
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}
