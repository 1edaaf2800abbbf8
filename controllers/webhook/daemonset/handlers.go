package daemonset

import (
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
)

// Handlers serves the DaemonSet defaulting and validating handlers at their 1.8 paths,
// /mutate- and /validate-apps-kruise-io-v1alpha1-daemonset.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Version: "v1alpha1", Name: "daemonset",
	Mutating:   func(e admit.Env) admission.Handler { return NewMutatingHandler(e.Kind.Decoder) },
	Validating: func(e admit.Env) admission.Handler { return NewValidatingHandler(e.Kind.Decoder) },
}.Handlers

// NewMutatingHandler returns the defaulting handler.
func NewMutatingHandler(dec admission.Decoder) admission.Handler {
	return admit.Mutating(admit.Kind{Name: "daemonset", Decoder: dec}, admit.Defaults(setDefaults))
}

// NewValidatingHandler returns the validating handler.
func NewValidatingHandler(dec admission.Decoder) admission.Handler {
	return admit.Validating(admit.Kind{Name: "daemonset", Decoder: dec, WithOld: true}, admit.Pure(validateDaemonSet))
}
