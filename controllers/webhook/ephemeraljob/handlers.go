package ephemeraljob

import (
	"context"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// ValidatingPath is the 1.8 path of the EphemeralJob validating webhook.
const ValidatingPath = "/validate-apps-kruise-io-v1alpha1-ephemeraljob"

// Handlers returns the EphemeralJob validating handler by its 1.8 path.
func Handlers(mgr ctrl.Manager, _ setup.Deps) map[string]admission.Handler {
	return map[string]admission.Handler{ValidatingPath: NewValidatingHandler(admission.NewDecoder(mgr.GetScheme()))}
}

// ValidatingHandler validates EphemeralJobs on create and update.
type ValidatingHandler struct{ decoder admission.Decoder }

// NewValidatingHandler returns the validating handler.
func NewValidatingHandler(dec admission.Decoder) *ValidatingHandler {
	return &ValidatingHandler{decoder: dec}
}

// Handle refuses an invalid EphemeralJob with every field error. An update of a job being
// deleted always passes, so that its finalizers can be removed.
func (h *ValidatingHandler) Handle(_ context.Context, req admission.Request) admission.Response {
	switch req.Operation {
	case admissionv1.Create, admissionv1.Update:
	default:
		return admission.Allowed("")
	}
	job := &appsv1alpha1.EphemeralJob{}
	if err := h.decoder.Decode(req, job); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode ephemeraljob: %w", err))
	}
	if job.DeletionTimestamp != nil {
		return admission.Allowed("")
	}
	if errs := validateEphemeralJob(job); len(errs) > 0 {
		return admission.Errored(http.StatusUnprocessableEntity, errs.ToAggregate())
	}
	return admission.Allowed("")
}
