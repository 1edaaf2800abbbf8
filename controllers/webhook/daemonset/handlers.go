package daemonset

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
)

const (
	// MutatingPath is the 1.8 path of the DaemonSet defaulting webhook.
	MutatingPath = "/mutate-apps-kruise-io-v1alpha1-daemonset"
	// ValidatingPath is the 1.8 path of the DaemonSet validating webhook.
	ValidatingPath = "/validate-apps-kruise-io-v1alpha1-daemonset"
)

// Handlers returns the DaemonSet defaulting and validating handlers by their 1.8 paths.
func Handlers(mgr ctrl.Manager, _ setup.Deps) map[string]admission.Handler {
	dec := admission.NewDecoder(mgr.GetScheme())
	return map[string]admission.Handler{
		MutatingPath:   NewMutatingHandler(dec),
		ValidatingPath: NewValidatingHandler(dec),
	}
}

// NewMutatingHandler returns the defaulting handler.
func NewMutatingHandler(dec admission.Decoder) admission.Handler {
	return admit.Mutating(admit.Kind{Name: "daemonset", Decoder: dec}, admit.Defaults(setDefaults))
}

// NewValidatingHandler returns the validating handler.
func NewValidatingHandler(dec admission.Decoder) admission.Handler {
	return admit.Validating(admit.Kind{Name: "daemonset", Decoder: dec, WithOld: true}, admit.Pure(validateDaemonSet))
}
