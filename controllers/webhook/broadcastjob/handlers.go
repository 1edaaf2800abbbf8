package broadcastjob

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
)

// Handlers serves the BroadcastJob defaulting and validating handlers at their 1.8 paths,
// /mutate- and /validate-apps-kruise-io-v1alpha1-broadcastjob. An update of a job being deleted
// always passes validation, so that its finalizers can be removed.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Version: "v1alpha1", Name: "broadcastjob",
	Mutating:   func(e admit.Env) admission.Handler { return mutatingHandler(e.Kind, e.Gates) },
	Validating: admit.PureValidating(func(job, _ *appsv1alpha1.BroadcastJob) field.ErrorList { return validateBroadcastJob(job) }, admit.LetDeletingPass),
}.Handlers

// mutatingHandler returns the defaulting handler under gates: the pod template gets the core
// defaults too unless TemplateNoDefaults is on (admit.TemplateDefaults).
func mutatingHandler(kind admit.Kind, gates featuregate.FeatureGate) admission.Handler {
	kind.WithOld = true
	return admit.Mutating(kind, func(_ context.Context, job, old *appsv1alpha1.BroadcastJob) error {
		setDefaults(job, admit.TemplateDefaults(gates, job, old, podTemplate))
		return nil
	})
}

// podTemplate is what decides whether the template is defaulted on an update.
func podTemplate(job *appsv1alpha1.BroadcastJob) any { return job.Spec.Template }
