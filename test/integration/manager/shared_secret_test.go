package manager

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

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
