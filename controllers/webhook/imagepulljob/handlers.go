package imagepulljob

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/apis/kinds"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/features"
)

const (
	// MutatingPath is the 1.8 path of the ImagePullJob defaulting webhook.
	MutatingPath = "/mutate-apps-kruise-io-v1alpha1-imagepulljob"
	// ListMutatingPath is the 1.8 path of the ImageListPullJob defaulting webhook.
	ListMutatingPath = "/mutate-apps-kruise-io-v1alpha1-imagelistpulljob"
	// ValidatingPath is the 1.8 path of the ImagePullJob validating webhook.
	ValidatingPath = "/validate-apps-kruise-io-v1alpha1-imagepulljob"
	// ListValidatingPath is the 1.8 path of the ImageListPullJob validating webhook.
	ListValidatingPath = "/validate-apps-kruise-io-v1alpha1-imagelistpulljob"
)

// Handlers returns the ImagePullJob and ImageListPullJob defaulting and validating handlers by
// their 1.8 paths. Defaulting fills the completion and pull policies as 1.8 does and, on CREATE,
// puts the ImagePullJob's protection finalizer on at once, so that a job deleted before its first
// reconcile still releases its secret copies. Validation refuses jobs while KruiseDaemon or ImagePullJobGate is off (403), and invalid ones with
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
		MutatingPath: admit.Mutating(admit.Kind{Name: "imagepulljob", Decoder: dec, WithOld: true},
			func(_ context.Context, job, old *appsv1alpha1.ImagePullJob) error {
				setTemplateDefaults(&job.Spec.ImagePullJobTemplate)
				if old == nil {
					controllerutil.AddFinalizer(job, kinds.ImagePullJobFinalizer)
				}
				return nil
			}),
		ListMutatingPath: admit.Mutating(admit.Kind{Name: "imagelistpulljob", Decoder: dec},
			admit.Defaults(func(job *appsv1alpha1.ImageListPullJob) { setTemplateDefaults(&job.Spec.ImagePullJobTemplate) })),
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

// setTemplateDefaults fills what 1.8 defaults in both jobs: completion policy Always, a pull
// policy of 600 s and 3 retries, and IfNotPresent.
func setTemplateDefaults(t *appsv1alpha1.ImagePullJobTemplate) {
	if t.CompletionPolicy.Type == "" {
		t.CompletionPolicy.Type = appsv1alpha1.Always
	}
	if t.PullPolicy == nil {
		t.PullPolicy = &appsv1alpha1.PullPolicy{}
	}
	if t.PullPolicy.TimeoutSeconds == nil {
		t.PullPolicy.TimeoutSeconds = ptr.To(appsv1alpha1.DefaultPullTimeoutSeconds)
	}
	if t.PullPolicy.BackoffLimit == nil {
		t.PullPolicy.BackoffLimit = ptr.To(appsv1alpha1.DefaultPullBackoffLimit)
	}
	if t.ImagePullPolicy == "" {
		t.ImagePullPolicy = appsv1alpha1.PullIfNotPresent
	}
}
