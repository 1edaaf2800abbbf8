package installer

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

func TestWebhookVerdict(t *testing.T) {
	ca := []byte("ca")
	svc := func(name string, caBundle []byte) webhookClient {
		return webhookClient{name, admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Name: webhookService}, CABundle: caBundle}}
	}
	byURL := func(name string, caBundle []byte) webhookClient {
		u := "https://10.0.0.5:9876/mutate-pod"
		return webhookClient{name, admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: caBundle}}
	}
	type want struct {
		mode, target, message string
		endpoints             int
		missingCA             []string
		reachable             bool
	}
	cases := map[string]struct {
		in   webhookFacts
		want want
	}{
		"service mode with endpoints and the CA everywhere is reachable through the Service": {
			in: webhookFacts{namespace: "ks", serviceEndpoints: 1, configs: map[string][]webhookClient{
				MutatingWebhookConfiguration: {svc("mpod.kb.io", ca)}, ValidatingWebhookConfiguration: {svc("vpod.kb.io", ca)},
			}},
			want: want{mode: "service", target: "Service ks/kruise-webhook-service", endpoints: 1, reachable: true,
				message: "1 ready endpoint(s) behind Service ks/kruise-webhook-service; CA bundle set"},
		},
		"URL mode counts the ready manager pods, not the Service's endpoints, and names the URL": {
			in: webhookFacts{namespace: "ks", serviceEndpoints: 0, readyManagers: 2, configs: map[string][]webhookClient{
				MutatingWebhookConfiguration: {byURL("mpod.kb.io", ca)}, ValidatingWebhookConfiguration: {byURL("vpod.kb.io", ca)},
			}},
			want: want{mode: "url", target: "https://10.0.0.5:9876", endpoints: 2, reachable: true,
				message: "URL mode: the apiserver calls https://10.0.0.5:9876; 2 ready manager pod(s) on the host network; CA bundle set"},
		},
		"URL mode without a ready manager is unreachable whatever the Service has": {
			in: webhookFacts{namespace: "ks", serviceEndpoints: 3, configs: map[string][]webhookClient{
				MutatingWebhookConfiguration: {byURL("mpod.kb.io", ca)}, ValidatingWebhookConfiguration: {byURL("vpod.kb.io", ca)},
			}},
			want: want{mode: "url", target: "https://10.0.0.5:9876", endpoints: 0,
				message: "URL mode: the apiserver calls https://10.0.0.5:9876, and no manager pod is ready to serve it: requests the webhooks cover fail or skip per failurePolicy"},
		},
		"a configuration without the CA is named with how many of its webhooks lack it": {
			in: webhookFacts{namespace: "ks", serviceEndpoints: 1, configs: map[string][]webhookClient{
				MutatingWebhookConfiguration:   {svc("mpod.kb.io", ca)},
				ValidatingWebhookConfiguration: {svc("vpod.kb.io", ca), svc("vclone.kb.io", nil)},
			}},
			want: want{mode: "service", target: "Service ks/kruise-webhook-service", endpoints: 1,
				missingCA: []string{"kruise-validating-webhook-configuration (1 of 2 webhooks)"},
				message:   "the manager has not patched its CA bundle into kruise-validating-webhook-configuration (1 of 2 webhooks) yet"},
		},
		"a missing configuration is counted": {
			in: webhookFacts{namespace: "ks", serviceEndpoints: 1, configs: map[string][]webhookClient{
				MutatingWebhookConfiguration: {svc("mpod.kb.io", ca)},
			}},
			want: want{mode: "service", target: "Service ks/kruise-webhook-service", endpoints: 1, message: "1 of 2 webhook configurations present"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := webhookVerdict(tc.in)
			got := want{mode: w.Mode, target: w.Target, message: w.Message, endpoints: w.ReadyEndpoints, missingCA: w.MissingCA, reachable: w.Reachable}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("webhook (-want +got):\n%s", diff)
			}
		})
	}
}
