package statefulset

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
)

const (
	// MutatingPath is the 1.8 path of the StatefulSet defaulting webhook, for both versions.
	MutatingPath = "/mutate-apps-kruise-io-statefulset"
	// ValidatingPath is the 1.8 path of the StatefulSet validating webhook, for both versions.
	ValidatingPath = "/validate-apps-kruise-io-statefulset"
)

// Handlers returns the StatefulSet defaulting and validating handlers by their 1.8 paths; the
// validating one also enforces deletion protection. Both served versions, v1alpha1 and
// v1beta1, have the same JSON shape, so both are read as plain JSON into the storage version's
// type, and a patch computed on it applies to the object as sent.
func Handlers(_ ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	mutating := admit.Kind{Name: "statefulset", Decoder: admit.JSON}
	validating := admit.Kind{Name: "statefulset", Decoder: admit.JSON, Namespaced: true, WithOld: true}
	return map[string]admission.Handler{
		MutatingPath: admit.Mutating(mutating, func(_ context.Context, set, _ *appsv1beta1.StatefulSet) error {
			setDefaults(&set.Spec, d.Gates)
			return nil
		}),
		ValidatingPath: admit.Validating(validating, admit.Pure(validateStatefulSet)).ProtectDeletion(d.Gates, validateDeletion),
	}
}
