package advancedcronjob

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
)

// Handlers serves the AdvancedCronJob defaulting and validating handlers at their 1.8 paths,
// /mutate- and /validate-apps-kruise-io-v1alpha1-advancedcronjob. Defaulting fills 1.8's
// defaults and, unless TemplateNoDefaults is on, the core pod defaults of the Job or BroadcastJob
// template on create and when the template changes. Validation refuses an invalid AdvancedCronJob, or
// an update of a field 1.8 keeps fixed, with every field error. An update of a job being
// deleted always passes, so that its finalizers can be removed.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Version: "v1alpha1", Name: "advancedcronjob",
	Mutating:   admit.TemplateDefaulting(setDefaults, templates),
	Validating: admit.PureValidating(validate, admit.ReadOld, admit.LetDeletingPass),
}.Handlers

// validate checks acj and, on update, what changed from old.
func validate(acj, old *appsv1alpha1.AdvancedCronJob) field.ErrorList {
	errs := validateAdvancedCronJob(acj)
	if old != nil {
		errs = append(errs, validateUpdate(acj, old)...)
	}
	return errs
}
