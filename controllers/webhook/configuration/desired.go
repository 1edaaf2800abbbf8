package configuration

import (
	"net"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/ptr"
)

// Target says where the webhooks are reached and how they fail.
type Target struct {
	// Namespace of Service kruise-webhook-service.
	Namespace string
	// Host, when set, makes every clientConfig the URL https://<Host>:<Port><path>.
	Host string
	Port int
	// CABundle verifies the serving certificate; empty leaves it to the Patcher.
	CABundle []byte
	// FailurePolicyPods applies to the pod webhooks, FailurePolicy to the others; empty is Fail.
	FailurePolicyPods, FailurePolicy admissionregistrationv1.FailurePolicyType
	// TimeoutSeconds defaults to 30.
	TimeoutSeconds int32
	// Gates decide the operations of gated rules (Table.ForGates); nil is every gate at its
	// default.
	Gates featuregate.FeatureGate

	// keepCABundle leaves every caBundle as it is found (the Patcher's External mode).
	keepCABundle bool
}

// PodNamespaceSelector keeps the pod webhooks away from the install namespace (labelled
// control-plane=openkruise) and kube-system, so that a manager outage under failurePolicy Fail
// does not stop the pods that would bring it back.
func PodNamespaceSelector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "control-plane", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"openkruise"}},
		{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"}},
	}}
}

// ClientConfig is how the apiserver reaches path.
func (t Target) ClientConfig(path string) admissionregistrationv1.WebhookClientConfig {
	cc := admissionregistrationv1.WebhookClientConfig{CABundle: t.CABundle}
	if t.Host != "" {
		cc.URL = ptr.To(URL(t.Host, t.Port, path))
		return cc
	}
	cc.Service = &admissionregistrationv1.ServiceReference{
		Namespace: t.Namespace, Name: ServiceName, Path: ptr.To(path), Port: ptr.To[int32](ServicePort),
	}
	return cc
}

// URL is https://<host>:<port><path>, with IPv6 hosts bracketed.
func URL(host string, port int, path string) string {
	return "https://" + net.JoinHostPort(host, strconv.Itoa(port)) + path
}

// Desired builds both webhook configurations from the table, as the chart renders them.
func Desired(t Target) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	table := Webhooks().ForGates(t.Gates)
	m := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: MutatingName}}
	for _, w := range table.Mutating {
		c := t.common(w)
		m.Webhooks = append(m.Webhooks, admissionregistrationv1.MutatingWebhook{
			Name: c.Name, ClientConfig: c.ClientConfig, Rules: c.Rules, FailurePolicy: c.FailurePolicy,
			SideEffects: c.SideEffects, TimeoutSeconds: c.TimeoutSeconds, AdmissionReviewVersions: c.AdmissionReviewVersions,
			NamespaceSelector: c.NamespaceSelector, ObjectSelector: c.ObjectSelector,
			MatchPolicy: ptr.To(admissionregistrationv1.Equivalent), ReinvocationPolicy: ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
		})
	}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: ValidatingName}}
	for _, w := range table.Validating {
		c := t.common(w)
		c.MatchPolicy = ptr.To(admissionregistrationv1.Equivalent)
		v.Webhooks = append(v.Webhooks, c)
	}
	return m, v
}

// common is the part mutating and validating webhooks share, as a validating webhook.
func (t Target) common(w Webhook) admissionregistrationv1.ValidatingWebhook {
	policy := t.FailurePolicy
	selector := &metav1.LabelSelector{}
	objects := &metav1.LabelSelector{}
	if w.PodWebhook {
		policy = t.FailurePolicyPods
		selector = PodNamespaceSelector()
	}
	if w.Protection {
		policy = admissionregistrationv1.Ignore
		selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"}},
		}}
		objects = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: ProtectionLabel, Operator: metav1.LabelSelectorOpExists},
		}}
	}
	if policy == "" {
		policy = admissionregistrationv1.Fail
	}
	timeout := t.TimeoutSeconds
	if timeout == 0 {
		timeout = 30
	}
	rules := make([]admissionregistrationv1.RuleWithOperations, 0, len(w.Rules))
	for _, r := range w.Rules {
		rules = append(rules, r.toAPI())
	}
	se := admissionregistrationv1.SideEffectClass(w.SideEffects)
	return admissionregistrationv1.ValidatingWebhook{
		Name: w.Name, ClientConfig: t.ClientConfig(w.Path), Rules: rules, FailurePolicy: ptr.To(policy),
		SideEffects: &se, TimeoutSeconds: ptr.To(timeout), AdmissionReviewVersions: AdmissionReviewVersions(),
		NamespaceSelector: selector, ObjectSelector: objects,
	}
}
