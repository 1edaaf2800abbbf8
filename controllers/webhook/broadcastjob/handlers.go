package broadcastjob

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
)

const (
	// MutatingPath is the 1.8 path of the BroadcastJob defaulting webhook.
	MutatingPath = "/mutate-apps-kruise-io-v1alpha1-broadcastjob"
	// ValidatingPath is the 1.8 path of the BroadcastJob validating webhook.
	ValidatingPath = "/validate-apps-kruise-io-v1alpha1-broadcastjob"
)

// Handlers returns the BroadcastJob defaulting and validating handlers by their 1.8 paths. An
// update of a job being deleted always passes validation, so that its finalizers can be
// removed.
func Handlers(mgr ctrl.Manager, _ setup.Deps) map[string]admission.Handler {
	dec := admission.NewDecoder(mgr.GetScheme())
	return map[string]admission.Handler{
		MutatingPath: admit.Mutating(admit.Kind{Name: "broadcastjob", Decoder: dec}, admit.Defaults(setDefaults)),
		ValidatingPath: admit.Validating(admit.Kind{Name: "broadcastjob", Decoder: dec, PassDeleting: true},
			admit.Pure(func(job, _ *appsv1alpha1.BroadcastJob) field.ErrorList { return validateBroadcastJob(job) })),
	}
}
