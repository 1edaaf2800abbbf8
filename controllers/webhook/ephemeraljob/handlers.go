package ephemeraljob

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
)

// Handlers serves the EphemeralJob validating handler at its 1.8 path,
// /validate-apps-kruise-io-v1alpha1-ephemeraljob. It refuses an invalid EphemeralJob with every
// field error; an update of a job being deleted always passes, so that its finalizers can be
// removed.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Version: "v1alpha1", Name: "ephemeraljob",
	Validating: admit.PureValidating(func(job, _ *appsv1alpha1.EphemeralJob) field.ErrorList { return validateEphemeralJob(job) }, admit.LetDeletingPass),
}.Handlers
