package advancedcronjob

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

// ValidatingPath is the 1.8 path of the AdvancedCronJob validating webhook.
const ValidatingPath = "/validate-apps-kruise-io-v1alpha1-advancedcronjob"

// Handlers returns the AdvancedCronJob validating handler by its 1.8 path.
func Handlers(mgr ctrl.Manager, _ setup.Deps) map[string]admission.Handler {
	return map[string]admission.Handler{ValidatingPath: NewValidatingHandler(admission.NewDecoder(mgr.GetScheme()))}
}

// ValidatingHandler validates AdvancedCronJobs on create and update.
type ValidatingHandler struct{ decoder admission.Decoder }

// NewValidatingHandler returns the validating handler.
func NewValidatingHandler(dec admission.Decoder) *ValidatingHandler {
	return &ValidatingHandler{decoder: dec}
}

// Handle refuses an invalid AdvancedCronJob, or an update of a field 1.8 keeps fixed, with
// every field error. An update of a job being deleted always passes, so that its finalizers can
// be removed.
func (h *ValidatingHandler) Handle(_ context.Context, req admission.Request) admission.Response {
	switch req.Operation {
	case admissionv1.Create, admissionv1.Update:
	default:
		return admission.Allowed("")
	}
	acj := &appsv1alpha1.AdvancedCronJob{}
	if err := h.decoder.Decode(req, acj); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode advancedcronjob: %w", err))
	}
	if acj.DeletionTimestamp != nil {
		return admission.Allowed("")
	}
	errs := validateAdvancedCronJob(acj)
	if req.Operation == admissionv1.Update {
		old := &appsv1alpha1.AdvancedCronJob{}
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode old advancedcronjob: %w", err))
		}
		errs = append(errs, validateUpdate(acj, old)...)
	}
	if len(errs) > 0 {
		return admission.Errored(http.StatusUnprocessableEntity, errs.ToAggregate())
	}
	return admission.Allowed("")
}
