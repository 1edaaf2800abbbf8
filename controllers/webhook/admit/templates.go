package admit

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/component-base/featuregate"

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
