package installer

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// In URL mode the apiserver calls webhookConfiguration.host directly, so status checks the
// manager pods serving it, names the URL, and says which configuration still lacks the CA.
func TestStatusInURLMode(t *testing.T) {
	ctx, i, ns := releaseTest(t, "kruise-url-mode")
	o := installer.Options{Namespace: ns, Set: testSet("manager.hostNetwork=true", "webhookConfiguration.host=127.0.0.1"), Timeout: installTimeout}
	res, err := i.Install(ctx, o)
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	t.Cleanup(func() {
		uninstall(t, i, ns)
		if err := pollUntil(context.Background(), func(context.Context) bool { return !namespaceExists(t, "kruise-daemon-config") }); err != nil {
			t.Errorf("the daemon config namespace is still there: %v", err)
		}
	})
	type view struct {
		Mode, Target string
		Reachable    bool
		MissingCA    []string
		Message      string
	}
	viewOf := func(w installer.Webhook) view {
		return view{Mode: w.Mode, Target: w.Target, Reachable: w.Reachable, MissingCA: w.MissingCA, Message: w.Message}
	}
	status := func(t *testing.T) view {
		t.Helper()
		st, err := i.Status(ctx, installer.Options{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		return viewOf(st.Webhook)
	}

	t.Run("the install's result says which configurations lack the CA", func(t *testing.T) {
		if res.Webhook == nil {
			t.Fatal("the install's result has no webhook")
		}
		want := []string{installer.MutatingWebhookConfiguration, installer.ValidatingWebhookConfiguration}
		if diff := cmp.Diff(want, configNames(res.Webhook.MissingCA)); diff != "" {
			t.Errorf("missing CA (-want +got):\n%s", diff)
		}
	})

	t.Run("with the CA only in the mutating configuration, status names the validating one", func(t *testing.T) {
		patchCA(t, installer.MutatingWebhookConfiguration)
		got := status(t)
		if diff := cmp.Diff([]string{installer.ValidatingWebhookConfiguration}, configNames(got.MissingCA)); diff != "" {
			t.Errorf("missing CA (-want +got):\n%s", diff)
		}
		if missing := testkit.Missing(got.Message, "has not patched its CA bundle into kruise-validating-webhook-configuration"); missing != nil {
			t.Errorf("message %q lacks %q", got.Message, missing)
		}
	})

	t.Run("with the CA everywhere, status checks the URL the apiserver calls and the manager pods serving it", func(t *testing.T) {
		patchCA(t, installer.ValidatingWebhookConfiguration)
		want := view{Mode: "url", Target: "https://127.0.0.1:9876", Reachable: true,
			Message: "URL mode: the apiserver calls https://127.0.0.1:9876; 1 ready manager pod(s) on the host network; CA bundle set"}
		if diff := cmp.Diff(want, status(t)); diff != "" {
			t.Errorf("webhook (-want +got):\n%s", diff)
		}
	})
}

// configNames drops the webhook counts from MissingCA entries ("<name> (n of m webhooks)").
func configNames(missing []string) []string {
	var out []string
	for _, m := range missing {
		name, _, _ := strings.Cut(m, " (")
		out = append(out, name)
	}
	return out
}

// patchCA puts a CA bundle into every webhook of the named configuration, as the manager does.
func patchCA(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	ca := []byte("test CA")
	ar := env.Clientset.AdmissionregistrationV1()
	var err error
	if name == installer.MutatingWebhookConfiguration {
		err = update(ctx, ar.MutatingWebhookConfigurations(), name, func(c *admissionregistrationv1.MutatingWebhookConfiguration) {
			for k := range c.Webhooks {
				c.Webhooks[k].ClientConfig.CABundle = ca
			}
		})
	} else {
		err = update(ctx, ar.ValidatingWebhookConfigurations(), name, func(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
			for k := range c.Webhooks {
				c.Webhooks[k].ClientConfig.CABundle = ca
			}
		})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// update reads the object name through c, changes it with change and writes it back.
func update[T any](ctx context.Context, c interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}, name string, change func(T)) error {
	obj, err := c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	change(obj)
	_, err = c.Update(ctx, obj, metav1.UpdateOptions{})
	return err
}
