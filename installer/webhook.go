package installer

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The webhook configurations and the Service the chart renders.
const (
	MutatingWebhookConfiguration   = "kruise-mutating-webhook-configuration"
	ValidatingWebhookConfiguration = "kruise-validating-webhook-configuration"
	webhookService                 = "kruise-webhook-service"
	managerSelector                = "control-plane=controller-manager"
)

// Webhook modes: how the apiserver calls the manager.
const (
	// WebhookModeService: through Service kruise-webhook-service.
	WebhookModeService = "service"
	// WebhookModeURL: straight to https://<webhookConfiguration.host>:<port>.
	WebhookModeURL = "url"
)

// Webhook says whether the apiserver can call the manager's webhooks, for the mode the webhook
// configurations really use.
type Webhook struct {
	// Mode is service or url, read from the configurations' client config.
	Mode string `json:"mode,omitempty"`
	// Target is what the apiserver calls: the Service, or the URL's scheme, host and port.
	Target string `json:"target,omitempty"`
	// ReadyEndpoints counts ready endpoints behind kruise-webhook-service (service mode) or
	// ready manager pods (url mode, where the manager serves on the host's network).
	ReadyEndpoints int `json:"readyEndpoints"`
	// Configurations counts the webhook configurations present (of 2).
	Configurations int `json:"configurations"`
	// CABundleSet is true when the manager has patched its CA into every webhook.
	CABundleSet bool `json:"caBundleSet"`
	// MissingCA names each configuration with webhooks that lack the CA, with how many.
	MissingCA []string `json:"missingCA,omitempty"`
	Reachable bool     `json:"reachable"`
	Message   string   `json:"message"`
}

// webhookFacts is what the webhook verdict is computed from.
type webhookFacts struct {
	namespace string
	// configs maps a configuration's name to the client configs of its webhooks (by webhook
	// name); an absent configuration is absent from the map.
	configs map[string][]webhookClient
	// serviceEndpoints counts ready endpoints behind the Service; readyManagers ready manager
	// pods.
	serviceEndpoints, readyManagers int
}

type webhookClient struct {
	name   string
	config admissionregistrationv1.WebhookClientConfig
}

// webhookVerdict is the webhook status from facts: pure.
func webhookVerdict(f webhookFacts) Webhook {
	var w Webhook
	urls := map[string]bool{}
	services := 0
	for _, name := range []string{MutatingWebhookConfiguration, ValidatingWebhookConfiguration} {
		hooks, ok := f.configs[name]
		if !ok {
			continue
		}
		w.Configurations++
		missing := 0
		for _, h := range hooks {
			if len(h.config.CABundle) == 0 {
				missing++
			}
			if h.config.URL != nil {
				urls[baseURL(*h.config.URL)] = true
			} else if h.config.Service != nil {
				services++
			}
		}
		if missing > 0 {
			w.MissingCA = append(w.MissingCA, fmt.Sprintf("%s (%d of %d webhooks)", name, missing, len(hooks)))
		}
	}
	w.CABundleSet = w.Configurations > 0 && len(w.MissingCA) == 0
	switch {
	case len(urls) > 0 && services == 0:
		w.Mode = WebhookModeURL
		w.Target = strings.Join(slices.Sorted(maps.Keys(urls)), ", ")
		w.ReadyEndpoints = f.readyManagers
	default:
		w.Mode = WebhookModeService
		w.Target = fmt.Sprintf("Service %s/%s", f.namespace, webhookService)
		w.ReadyEndpoints = f.serviceEndpoints
	}
	mixed := len(urls) > 0 && services > 0
	w.Reachable = !mixed && w.ReadyEndpoints > 0 && w.Configurations == 2 && w.CABundleSet
	switch {
	case w.Configurations < 2:
		w.Message = fmt.Sprintf("%d of 2 webhook configurations present", w.Configurations)
	case mixed:
		w.Message = fmt.Sprintf("the webhooks mix URLs (%s) and Service %s; upgrade the release to make them agree", w.Target, webhookService)
	case w.ReadyEndpoints == 0 && w.Mode == WebhookModeURL:
		w.Message = fmt.Sprintf("URL mode: the apiserver calls %s, and no manager pod is ready to serve it: requests the webhooks cover fail or skip per failurePolicy", w.Target)
	case w.ReadyEndpoints == 0:
		w.Message = fmt.Sprintf("no ready endpoint behind %s: requests the webhooks cover fail or skip per failurePolicy", w.Target)
	case !w.CABundleSet:
		w.Message = "the manager has not patched its CA bundle into " + strings.Join(w.MissingCA, " and ") + " yet"
	case w.Mode == WebhookModeURL:
		w.Message = fmt.Sprintf("URL mode: the apiserver calls %s; %d ready manager pod(s) on the host network; CA bundle set", w.Target, w.ReadyEndpoints)
	default:
		w.Message = fmt.Sprintf("%d ready endpoint(s) behind %s; CA bundle set", w.ReadyEndpoints, w.Target)
	}
	return w
}

// baseURL is a webhook URL without its path: what the apiserver connects to.
func baseURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return s
	}
	return u.Scheme + "://" + u.Host
}

// webhook reads the webhook configurations, the Service's endpoints and the manager pods.
func (i *Installer) webhook(ctx context.Context, namespace string) (Webhook, error) {
	f := webhookFacts{namespace: namespace, configs: map[string][]webhookClient{}}
	slices, err := i.kube.DiscoveryV1().EndpointSlices(namespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + webhookService})
	if err != nil {
		return Webhook{}, fmt.Errorf("list webhook endpoints: %w", err)
	}
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				f.serviceEndpoints++
			}
		}
	}
	pods, err := i.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: managerSelector})
	if err != nil {
		return Webhook{}, fmt.Errorf("list manager pods: %w", err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && podReady(&p) {
			f.readyManagers++
		}
	}
	mw, err := i.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, MutatingWebhookConfiguration, metav1.GetOptions{})
	if err := f.record(MutatingWebhookConfiguration, "mutating", err, len(mw.Webhooks), func(k int) webhookClient {
		return webhookClient{mw.Webhooks[k].Name, mw.Webhooks[k].ClientConfig}
	}); err != nil {
		return Webhook{}, err
	}
	vw, err := i.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, ValidatingWebhookConfiguration, metav1.GetOptions{})
	if err := f.record(ValidatingWebhookConfiguration, "validating", err, len(vw.Webhooks), func(k int) webhookClient {
		return webhookClient{vw.Webhooks[k].Name, vw.Webhooks[k].ClientConfig}
	}); err != nil {
		return Webhook{}, err
	}
	return webhookVerdict(f), nil
}

// record keeps the n webhook clients of configuration name, as its get read them; a
// configuration that does not exist is left out, and one with no webhooks is recorded empty.
func (f *webhookFacts) record(name, kind string, err error, n int, client func(int) webhookClient) error {
	switch {
	case err == nil:
		f.configs[name] = nil
		for k := range n {
			f.configs[name] = append(f.configs[name], client(k))
		}
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("get %s webhook configuration: %w", kind, err)
	}
	return nil
}
