package ephemeraljob

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
)

// ValidatingPath is the 1.8 path of the EphemeralJob validating webhook.
const ValidatingPath = "/validate-apps-kruise-io-v1alpha1-ephemeraljob"

// Handlers returns the EphemeralJob validating handler by its 1.8 path. It refuses an invalid
// EphemeralJob with every field error; an update of a job being deleted always passes, so that
// its finalizers can be removed.
func Handlers(mgr ctrl.Manager, _ setup.Deps) map[string]admission.Handler {
	kind := admit.Kind{Name: "ephemeraljob", Decoder: admission.NewDecoder(mgr.GetScheme()), PassDeleting: true}
	return map[string]admission.Handler{ValidatingPath: admit.Validating(kind,
		admit.Pure(func(job, _ *appsv1alpha1.EphemeralJob) field.ErrorList { return validateEphemeralJob(job) }))}
}
