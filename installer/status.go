package installer

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/installer/release"
)

// Status is the add-on as it runs.
type Status struct {
	Release   *Result   `json:"release,omitempty"`
	State     string    `json:"state"`
	Readiness Readiness `json:"readiness"`
	Webhook   Webhook   `json:"webhook"`
	// DaemonNodes maps node name to whether its daemon pod is ready.
	DaemonNodes []DaemonNode `json:"daemonNodes,omitempty"`
}

// Webhook says whether the webhook can be reached.
type Webhook struct {
	// ReadyEndpoints counts ready endpoints behind kruise-webhook-service.
	ReadyEndpoints int `json:"readyEndpoints"`
	// Configurations counts the webhook configurations present (of 2).
	Configurations int `json:"configurations"`
	// CABundleSet is true when the manager has patched its CA into every webhook.
	CABundleSet bool   `json:"caBundleSet"`
	Reachable   bool   `json:"reachable"`
	Message     string `json:"message"`
}

// DaemonNode is the daemon on one node.
type DaemonNode struct {
	Node  string `json:"node"`
	Pod   string `json:"pod"`
	Ready bool   `json:"ready"`
}

// Status reports the release, each component's readiness, the webhook and the daemon per node.
func (i *Installer) Status(ctx context.Context, o Options) (*Status, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	_, last, _, err := i.openRelease(ctx, release.CmdStatus, o)
	if err != nil {
		return nil, err
	}
	st := &Status{State: string(release.StateOf(last))}
	if last != nil {
		st.Release = resultOf(last, release.StepNone)
	}
	if st.Readiness, err = i.readiness(ctx, o.Namespace); err != nil {
		return nil, err
	}
	if st.Webhook, err = i.webhook(ctx, o.Namespace); err != nil {
		return nil, err
	}
	pods, err := i.kube.CoreV1().Pods(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "control-plane=daemon"})
	if err != nil {
		return nil, fmt.Errorf("list daemon pods: %w", err)
	}
	for _, p := range pods.Items {
		st.DaemonNodes = append(st.DaemonNodes, DaemonNode{Node: p.Spec.NodeName, Pod: p.Name, Ready: podReady(&p)})
	}
	sort.Slice(st.DaemonNodes, func(a, b int) bool { return st.DaemonNodes[a].Node < st.DaemonNodes[b].Node })
	return st, nil
}

func (i *Installer) webhook(ctx context.Context, namespace string) (Webhook, error) {
	var w Webhook
	slices, err := i.kube.DiscoveryV1().EndpointSlices(namespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kruise-webhook-service"})
	if err != nil {
		return w, fmt.Errorf("list webhook endpoints: %w", err)
	}
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				w.ReadyEndpoints++
			}
		}
	}
	w.CABundleSet = true
	mw, err := i.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "kruise-mutating-webhook-configuration", metav1.GetOptions{})
	switch {
	case err == nil:
		w.Configurations++
		for _, h := range mw.Webhooks {
			w.CABundleSet = w.CABundleSet && len(h.ClientConfig.CABundle) > 0
		}
	case apierrors.IsNotFound(err):
	default:
		return w, fmt.Errorf("get mutating webhook configuration: %w", err)
	}
	vw, err := i.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "kruise-validating-webhook-configuration", metav1.GetOptions{})
	switch {
	case err == nil:
		w.Configurations++
		for _, h := range vw.Webhooks {
			w.CABundleSet = w.CABundleSet && len(h.ClientConfig.CABundle) > 0
		}
	case apierrors.IsNotFound(err):
	default:
		return w, fmt.Errorf("get validating webhook configuration: %w", err)
	}
	if w.Configurations == 0 {
		w.CABundleSet = false
	}
	w.Reachable = w.ReadyEndpoints > 0 && w.Configurations == 2 && w.CABundleSet
	switch {
	case w.Reachable:
		w.Message = fmt.Sprintf("%d ready endpoint(s) behind kruise-webhook-service; CA bundle set", w.ReadyEndpoints)
	case w.ReadyEndpoints == 0:
		w.Message = "no ready endpoint behind kruise-webhook-service: requests the webhooks cover fail or skip per failurePolicy"
	case !w.CABundleSet:
		w.Message = "the manager has not patched its CA bundle into the webhook configurations yet"
	default:
		w.Message = fmt.Sprintf("%d of 2 webhook configurations present", w.Configurations)
	}
	return w, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
