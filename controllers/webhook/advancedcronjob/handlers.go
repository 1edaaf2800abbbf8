package advancedcronjob

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
)

// ValidatingPath is the 1.8 path of the AdvancedCronJob validating webhook.
const ValidatingPath = "/validate-apps-kruise-io-v1alpha1-advancedcronjob"

// Handlers returns the AdvancedCronJob validating handler by its 1.8 path. It refuses an
// invalid AdvancedCronJob, or an update of a field 1.8 keeps fixed, with every field error. An
// update of a job being deleted always passes, so that its finalizers can be removed.
func Handlers(mgr ctrl.Manager, _ setup.Deps) map[string]admission.Handler {
	kind := admit.Kind{Name: "advancedcronjob", Decoder: admission.NewDecoder(mgr.GetScheme()), WithOld: true, PassDeleting: true}
	return map[string]admission.Handler{ValidatingPath: admit.Validating(kind, admit.Pure(validate))}
}

// validate checks acj and, on update, what changed from old.
func validate(acj, old *appsv1alpha1.AdvancedCronJob) field.ErrorList {
	errs := validateAdvancedCronJob(acj)
	if old != nil {
		errs = append(errs, validateUpdate(acj, old)...)
	}
	return errs
}
