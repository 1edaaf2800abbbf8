package broadcastjob

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
)

// Handlers serves the BroadcastJob defaulting and validating handlers at their 1.8 paths,
// /mutate- and /validate-apps-kruise-io-v1alpha1-broadcastjob. An update of a job being deleted
// always passes validation, so that its finalizers can be removed.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Version: "v1alpha1", Name: "broadcastjob",
	Mutating:   admit.TemplateDefaulting(setDefaults, podTemplate),
	Validating: admit.PureValidating(func(job, _ *appsv1alpha1.BroadcastJob) field.ErrorList { return validateBroadcastJob(job) }, admit.LetDeletingPass),
}.Handlers

// podTemplate is what decides whether the template is defaulted on an update.
func podTemplate(job *appsv1alpha1.BroadcastJob) any { return job.Spec.Template }
