package configuration

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// secretName is the Secret of the webhook certificates (certs.SecretName).
const secretName = "kruise-webhook-certs"

// ConvertPath is where CRD conversion is served.
const ConvertPath = "/convert"

// Groups are the API groups whose CRDs get the conversion clientConfig.
func Groups() []string { return []string{"apps.kruise.io", "policy.kruise.io"} }

// Patcher writes the current CA (and, with a Host, the URL) into both webhook configurations
// and into the conversion of our CRDs whose strategy is Webhook. It runs on the leader only,
// so that replicas with different hosts do not take turns.
type Patcher struct {
	Client client.Client
	// CABundle returns the CA to write; nil means not known yet, and nothing is written.
	CABundle func() []byte
	// Target carries Namespace, Host and Port; its CABundle is ignored.
	Target Target
	// Served reports whether this manager has a handler for a path. A webhook whose path is
	// not served (its gate is off, say) is dropped from the configuration, so that it cannot
	// fail requests nobody would answer; nil keeps every webhook.
	Served func(path string) bool
	// External leaves every caBundle to the certificate issuer's CA injector (the
	// EnableExternalCerts gate): the patcher writes none, and a pass in which a served webhook
	// or a Webhook conversion does not hold CABundle() fails, naming it, and is retried.
	External bool
}

// everything is the single request the patcher works on: each pass looks at all objects.
var everything = reconcile.Request{NamespacedName: types.NamespacedName{Name: "webhook-configurations"}}

// SetupWithManager watches the two configurations, our CRDs, and trigger (sent on when the CA
// changes).
func (p *Patcher) SetupWithManager(mgr ctrl.Manager, trigger <-chan event.GenericEvent) error {
	all := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{everything}
	})
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool {
		switch o.(type) {
		case *apiextensionsv1.CustomResourceDefinition:
			return isOurGroup(o.GetName())
		}
		return o.GetName() == MutatingName || o.GetName() == ValidatingName
	})
	err := ctrl.NewControllerManagedBy(mgr).
		Named("webhook-configuration").
		Watches(&admissionregistrationv1.MutatingWebhookConfiguration{}, all, builder.WithPredicates(ours)).
		Watches(&admissionregistrationv1.ValidatingWebhookConfiguration{}, all, builder.WithPredicates(ours)).
		Watches(&apiextensionsv1.CustomResourceDefinition{}, all, builder.WithPredicates(ours)).
		WatchesRawSource(source.Channel(trigger, all)).
		Complete(p)
	if err != nil {
		return fmt.Errorf("set up webhook configuration controller: %w", err)
	}
	return nil
}

// Reconcile patches whatever is out of date.
func (p *Patcher) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	ca := p.CABundle()
	if len(ca) == 0 {
		return reconcile.Result{}, nil
	}
	t := p.Target
	t.CABundle = ca
	t.keepCABundle = p.External
	if err := p.patchMutating(ctx, t); err != nil {
		return reconcile.Result{}, err
	}
	if err := p.patchValidating(ctx, t); err != nil {
		return reconcile.Result{}, err
	}
	if err := p.patchCRDs(ctx, t); err != nil {
		return reconcile.Result{}, err
	}
	if p.External {
		return reconcile.Result{}, p.CheckInjected(ctx)
	}
	return reconcile.Result{}, nil
}

// CheckInjected returns an error naming every served webhook and Webhook conversion of ours
// whose caBundle is not CABundle(), with what injects it. The manager's readiness check calls
// it on every replica, so that a manager is not ready while the apiserver could not verify its
// certificate.
func (p *Patcher) CheckInjected(ctx context.Context) error {
	ca := p.CABundle()
	if len(ca) == 0 {
		return fmt.Errorf("no webhook certificate read from Secret %s/%s yet", p.Target.Namespace, secretName)
	}
	var stale []string
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := p.Client.Get(ctx, client.ObjectKey{Name: MutatingName}, m); client.IgnoreNotFound(err) != nil {
		return err
	}
	for _, w := range m.Webhooks {
		if p.serves(w.ClientConfig) && !bytes.Equal(w.ClientConfig.CABundle, ca) {
			stale = append(stale, MutatingName+"/"+w.Name)
		}
	}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := p.Client.Get(ctx, client.ObjectKey{Name: ValidatingName}, v); client.IgnoreNotFound(err) != nil {
		return err
	}
	for _, w := range v.Webhooks {
		if p.serves(w.ClientConfig) && !bytes.Equal(w.ClientConfig.CABundle, ca) {
			stale = append(stale, ValidatingName+"/"+w.Name)
		}
	}
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	// Read only: the cache's objects are not copied (the readiness probe calls this often).
	if err := p.Client.List(ctx, crds, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list crds: %w", err)
	}
	for _, crd := range crds.Items {
		conv := crd.Spec.Conversion
		if !isOurGroup(crd.Name) || conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter {
			continue
		}
		if conv.Webhook == nil || conv.Webhook.ClientConfig == nil || !bytes.Equal(conv.Webhook.ClientConfig.CABundle, ca) {
			stale = append(stale, "customresourcedefinition/"+crd.Name)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	if !p.External {
		return fmt.Errorf("the caBundle of %s is not yet the ca.crt of Secret %s/%s: the leading manager writes it",
			strings.Join(stale, ", "), p.Target.Namespace, secretName)
	}
	return fmt.Errorf("EnableExternalCerts is on, and the caBundle of %s is not the ca.crt of Secret %s/%s: "+
		"the certificate issuer's CA injector writes it (chart value externalCerts.annotations, e.g. "+
		"cert-manager.io/inject-ca-from: %s/<certificate>); the manager writes no caBundle while the gate is on",
		strings.Join(stale, ", "), p.Target.Namespace, secretName, p.Target.Namespace)
}

func (p *Patcher) patchMutating(ctx context.Context, t Target) error {
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	return patchWebhooks(ctx, p, t, MutatingName, Webhooks().ForGates(t.Gates).Mutating, cfg, &cfg.Webhooks,
		func(w *admissionregistrationv1.MutatingWebhook) (string, *admissionregistrationv1.WebhookClientConfig, *[]admissionregistrationv1.RuleWithOperations) {
			return w.Name, &w.ClientConfig, &w.Rules
		})
}

func (p *Patcher) patchValidating(ctx context.Context, t Target) error {
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	return patchWebhooks(ctx, p, t, ValidatingName, Webhooks().ForGates(t.Gates).Validating, cfg, &cfg.Webhooks,
		func(w *admissionregistrationv1.ValidatingWebhook) (string, *admissionregistrationv1.WebhookClientConfig, *[]admissionregistrationv1.RuleWithOperations) {
			return w.Name, &w.ClientConfig, &w.Rules
		})
}

// patchWebhooks reads the webhook configuration name into cfg, whose webhooks are hooks, drops
// the webhooks this manager does not serve, points the others at t, gives those the table has
// (table, under t's gates) the table's rules, and patches cfg if that changed it; of names the
// webhook, its client configuration and its rules.
func patchWebhooks[W any](ctx context.Context, p *Patcher, t Target, name string, table []Webhook, cfg client.Object, hooks *[]W,
	of func(*W) (string, *admissionregistrationv1.WebhookClientConfig, *[]admissionregistrationv1.RuleWithOperations)) error {
	if err := p.Client.Get(ctx, client.ObjectKey{Name: name}, cfg); err != nil {
		return client.IgnoreNotFound(err)
	}
	want := map[string][]Rule{}
	for _, w := range table {
		want[w.Name] = w.Rules
	}
	base := cfg.DeepCopyObject().(client.Object)
	changed := false
	kept := (*hooks)[:0]
	for _, w := range *hooks {
		hook, cc, rules := of(&w)
		if !p.serves(*cc) {
			ctrl.LoggerFrom(ctx).Info("dropping a webhook this manager does not serve", "webhook", hook)
			changed = true
			continue
		}
		changed = t.fixClientConfig(cc) || changed
		if r, ok := want[hook]; ok {
			changed = fixRules(rules, r) || changed
		}
		kept = append(kept, w)
	}
	*hooks = kept
	return p.patch(ctx, cfg, base, changed)
}

// fixRules sets rules to the table's, as the apiserver stores them (scope "*" when the table
// names none); it reports a change. A manager started with other gates than the chart rendered
// for thus adds or removes the gated operations (Rule.OperationGates).
func fixRules(rules *[]admissionregistrationv1.RuleWithOperations, table []Rule) bool {
	want := make([]admissionregistrationv1.RuleWithOperations, 0, len(table))
	for _, r := range table {
		api := r.toAPI()
		if api.Scope == nil {
			api.Scope = ptr.To(admissionregistrationv1.AllScopes)
		}
		want = append(want, api)
	}
	if equality.Semantic.DeepEqual(*rules, want) {
		return false
	}
	*rules = want
	return true
}

// serves reports whether the webhook reached through cc has a handler here.
func (p *Patcher) serves(cc admissionregistrationv1.WebhookClientConfig) bool {
	if p.Served == nil {
		return true
	}
	path, ok := clientConfigPath(&cc)
	return !ok || p.Served(path)
}

func (p *Patcher) patchCRDs(ctx context.Context, t Target) error {
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := p.Client.List(ctx, list); err != nil {
		return fmt.Errorf("list crds: %w", err)
	}
	for i := range list.Items {
		crd := &list.Items[i]
		if !isOurGroup(crd.Name) || crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextensionsv1.WebhookConverter {
			continue
		}
		base := crd.DeepCopy()
		if err := p.patch(ctx, crd, base, t.fixConversion(crd.Spec.Conversion)); err != nil {
			return err
		}
	}
	return nil
}

// patch sends the change guarded by the resourceVersion read, so that a concurrent writer
// (helm upgrade) is not overwritten; the conflict requeues the pass.
func (p *Patcher) patch(ctx context.Context, obj, base client.Object, changed bool) error {
	if !changed {
		return nil
	}
	if err := p.Client.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("patch %s: %w", obj.GetName(), err)
	}
	ctrl.LoggerFrom(ctx).Info("patched webhook client config", "name", obj.GetName())
	return nil
}

// fixClientConfig sets the CA and, with a Host, the URL (keeping the path); it reports a change.
func (t Target) fixClientConfig(cc *admissionregistrationv1.WebhookClientConfig) bool {
	changed := false
	if !t.keepCABundle && !bytes.Equal(cc.CABundle, t.CABundle) {
		cc.CABundle = t.CABundle
		changed = true
	}
	if t.Host == "" {
		return changed
	}
	path, ok := clientConfigPath(cc)
	if !ok {
		return changed
	}
	want := URL(t.Host, t.Port, path)
	if cc.URL == nil || *cc.URL != want || cc.Service != nil {
		cc.URL, cc.Service = ptr.To(want), nil
		changed = true
	}
	return changed
}

// fixConversion points a Webhook conversion at /convert with the CA; it reports a change.
func (t Target) fixConversion(conv *apiextensionsv1.CustomResourceConversion) bool {
	if conv.Webhook == nil {
		conv.Webhook = &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1", "v1beta1"}}
	}
	want := apiextensionsv1.WebhookClientConfig{CABundle: t.CABundle}
	if t.keepCABundle {
		want.CABundle = nil
		if conv.Webhook.ClientConfig != nil {
			want.CABundle = conv.Webhook.ClientConfig.CABundle
		}
	}
	if t.Host != "" {
		want.URL = ptr.To(URL(t.Host, t.Port, ConvertPath))
	} else {
		want.Service = &apiextensionsv1.ServiceReference{
			Namespace: t.Namespace, Name: ServiceName, Path: ptr.To(ConvertPath), Port: ptr.To[int32](ServicePort),
		}
	}
	cur := conv.Webhook.ClientConfig
	if cur != nil && bytes.Equal(cur.CABundle, want.CABundle) && ptr.Deref(cur.URL, "") == ptr.Deref(want.URL, "") &&
		sameService(cur.Service, want.Service) {
		return false
	}
	conv.Webhook.ClientConfig = &want
	return true
}

func sameService(a, b *apiextensionsv1.ServiceReference) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Namespace == b.Namespace && a.Name == b.Name && ptr.Deref(a.Path, "") == ptr.Deref(b.Path, "") &&
		ptr.Deref(a.Port, 443) == ptr.Deref(b.Port, 443)
}

// clientConfigPath is the path a clientConfig reaches, from its service or its URL.
func clientConfigPath(cc *admissionregistrationv1.WebhookClientConfig) (string, bool) {
	if cc.Service != nil {
		return ptr.Deref(cc.Service.Path, "/"), true
	}
	if cc.URL == nil {
		return "", false
	}
	rest := strings.TrimPrefix(*cc.URL, "https://")
	if i := strings.Index(rest, "/"); i >= 0 {
		return rest[i:], true
	}
	return "/", true
}

func isOurGroup(crdName string) bool {
	for _, g := range Groups() {
		if strings.HasSuffix(crdName, "."+g) {
			return true
		}
	}
	return false
}
