package admit

import (
	"context"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/features"
)

// TemplateDefaults reports whether a defaulting webhook sets the core defaults in the pod (and
// claim) templates of the object it admits, as 1.8 does: never with TemplateNoDefaults on;
// always on create (old nil); on an update only when templates differ between obj and old, so
// that a default added by a later release does not roll every pod. templates returns what is
// compared; the kind's mutating handler needs Kind.WithOld for old to be given.
func TemplateDefaults[T comparable](gates featuregate.FeatureGate, obj, old T, templates func(T) any) bool {
	var none T
	if gates.Enabled(features.TemplateNoDefaults) {
		return false
	}
	return old == none || !apiequality.Semantic.DeepEqual(templates(obj), templates(old))
}

// TemplateDefaulting builds, for Webhooks.Mutating, the defaulting handler of a kind whose
// defaults read nothing but the object and put the core defaults in its templates when told
// (see TemplateDefaultingHandler).
func TemplateDefaulting[E any, T Object[E]](set func(obj T, withTemplates bool), templates func(T) any) func(Env) admission.Handler {
	return func(e Env) admission.Handler { return TemplateDefaultingHandler(e.Kind, e.Gates, set, templates) }
}

// TemplateDefaultingHandler is the defaulting handler of kind under gates: set fills obj's
// defaults, with the core defaults in its templates when TemplateDefaults says so.
func TemplateDefaultingHandler[E any, T Object[E]](kind Kind, gates featuregate.FeatureGate, set func(obj T, withTemplates bool), templates func(T) any) *MutatingHandler[E, T] {
	kind.WithOld = true
	return Mutating(kind, func(_ context.Context, obj, old T) error {
		set(obj, TemplateDefaults(gates, obj, old, templates))
		return nil
	})
}
