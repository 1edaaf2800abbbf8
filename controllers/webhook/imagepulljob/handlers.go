package imagepulljob

import (
	"context"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
)

const (
	// ValidatingPath is the 1.8 path of the ImagePullJob validating webhook.
	ValidatingPath = "/validate-apps-kruise-io-v1alpha1-imagepulljob"
	// ListValidatingPath is the 1.8 path of the ImageListPullJob validating webhook.
	ListValidatingPath = "/validate-apps-kruise-io-v1alpha1-imagelistpulljob"
)

// Handlers returns the ImagePullJob and ImageListPullJob validating handlers by their 1.8 paths.
func Handlers(_ ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	return handlersFor(d.Gates)
}

// handlersFor builds the handlers; nil gates means the 1.8 defaults. The jobs are decoded with
// the add-on's scheme, which is all these handlers read.
func handlersFor(gates featuregate.FeatureGate) map[string]admission.Handler {
	dec := admission.NewDecoder(apis.NewScheme())
	if gates == nil {
		gates = features.NewGate()
	}
	return map[string]admission.Handler{
		ValidatingPath: &Handler{
			kind: "imagepulljob", gates: gates,
			validate: func(req admission.Request) (bool, field.ErrorList, error) {
				job := &appsv1alpha1.ImagePullJob{}
				if err := dec.Decode(req, job); err != nil {
					return false, nil, err
				}
				return job.DeletionTimestamp != nil, validateImagePullJob(job), nil
			},
		},
		ListValidatingPath: &Handler{
			kind: "imagelistpulljob", gates: gates,
			validate: func(req admission.Request) (bool, field.ErrorList, error) {
				job := &appsv1alpha1.ImageListPullJob{}
				if err := dec.Decode(req, job); err != nil {
					return false, nil, err
				}
				return job.DeletionTimestamp != nil, validateImageListPullJob(job), nil
			},
		},
	}
}

// Handler refuses jobs of one kind while the gates are off, and invalid ones with every field
// error. An update of a job being deleted always passes, so its finalizer can be removed.
type Handler struct {
	kind  string
	gates featuregate.FeatureGate
	// validate decodes the request's object and says whether it is being deleted and what
	// rules it breaks.
	validate func(admission.Request) (bool, field.ErrorList, error)
}

// Handle answers one admission request.
func (h *Handler) Handle(_ context.Context, req admission.Request) admission.Response {
	deleting, errs, err := h.validate(req)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode %s: %w", h.kind, err))
	}
	if deleting {
		return admission.Allowed("")
	}
	for _, g := range []featuregate.Feature{features.KruiseDaemon, features.ImagePullJobGate} {
		if !h.gates.Enabled(g) {
			return admission.Errored(http.StatusForbidden, fmt.Errorf("feature gate %s is not enabled", g))
		}
	}
	if len(errs) > 0 {
		return admission.Errored(http.StatusUnprocessableEntity, errs.ToAggregate())
	}
	return admission.Allowed("")
}
