package imagepulljob

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/features"
)

const (
	// ValidatingPath is the 1.8 path of the ImagePullJob validating webhook.
	ValidatingPath = "/validate-apps-kruise-io-v1alpha1-imagepulljob"
	// ListValidatingPath is the 1.8 path of the ImageListPullJob validating webhook.
	ListValidatingPath = "/validate-apps-kruise-io-v1alpha1-imagelistpulljob"
)

// Handlers returns the ImagePullJob and ImageListPullJob validating handlers by their 1.8 paths.
// They refuse jobs while KruiseDaemon or ImagePullJobGate is off (403), and invalid ones with
// every field error; an update of a job being deleted always passes, so its finalizer can be
// removed. The jobs are decoded with the add-on's scheme, which is all these handlers read.
func Handlers(_ ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	dec := admission.NewDecoder(apis.NewScheme())
	gated := func(errs field.ErrorList) (field.ErrorList, error) {
		if err := admit.RequireGates(d.Gates, features.KruiseDaemon, features.ImagePullJobGate); err != nil {
			return nil, err
		}
		return errs, nil
	}
	return map[string]admission.Handler{
		ValidatingPath: admit.Validating(admit.Kind{Name: "imagepulljob", Decoder: dec, PassDeleting: true},
			func(_ context.Context, job, _ *appsv1alpha1.ImagePullJob) (field.ErrorList, error) {
				return gated(validateImagePullJob(job))
			}),
		ListValidatingPath: admit.Validating(admit.Kind{Name: "imagelistpulljob", Decoder: dec, PassDeleting: true},
			func(_ context.Context, job, _ *appsv1alpha1.ImageListPullJob) (field.ErrorList, error) {
				return gated(validateImageListPullJob(job))
			}),
	}
}
