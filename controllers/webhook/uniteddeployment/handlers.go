package uniteddeployment

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
)

const (
	// MutatingPath is the 1.8 path of the UnitedDeployment defaulting webhook.
	MutatingPath = "/mutate-apps-kruise-io-v1alpha1-uniteddeployment"
	// ValidatingPath is the 1.8 path of the UnitedDeployment validating webhook.
	ValidatingPath = "/validate-apps-kruise-io-v1alpha1-uniteddeployment"
)

// Handlers returns the UnitedDeployment defaulting and validating handlers by their 1.8 paths;
// the validating one also enforces deletion protection.
func Handlers(mgr ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	dec := admission.NewDecoder(mgr.GetScheme())
	return map[string]admission.Handler{
		MutatingPath: admit.Mutating(admit.Kind{Name: "uniteddeployment", Decoder: dec}, admit.Defaults(setDefaults)),
		ValidatingPath: admit.Validating(admit.Kind{Name: "uniteddeployment", Decoder: dec, WithOld: true}, admit.Pure(validate)).
			ProtectDeletion(deletionprotection.GuardFor(mgr, d), validateDeletion),
	}
}
