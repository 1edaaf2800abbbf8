package statefulset

import (
	"context"

	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
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
func Handlers(mgr ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	return map[string]admission.Handler{
		MutatingPath:   mutatingHandler(d.Gates),
		ValidatingPath: validatingHandler(deletionprotection.GuardFor(mgr, d)),
	}
}

// mutatingHandler returns the defaulting handler under gates.
func mutatingHandler(gates featuregate.FeatureGate) admission.Handler {
	kind := admit.Kind{Name: "statefulset", Decoder: admit.JSON}
	return admit.Mutating(kind, func(_ context.Context, set, _ *appsv1beta1.StatefulSet) error {
		setDefaults(&set.Spec, gates)
		return nil
	})
}

// validatingHandler returns the validating handler, whose deletion protection guard answers.
func validatingHandler(guard *deletionprotection.Guard) admission.Handler {
	kind := admit.Kind{Name: "statefulset", Decoder: admit.JSON, Namespaced: true, WithOld: true}
	return admit.Validating(kind, admit.Pure(validateStatefulSet)).ProtectDeletion(guard, validateDeletion)
}
