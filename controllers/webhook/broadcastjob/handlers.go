package broadcastjob

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

const (
	// MutatingPath is the 1.8 path of the BroadcastJob defaulting webhook.
	MutatingPath = "/mutate-apps-kruise-io-v1alpha1-broadcastjob"
	// ValidatingPath is the 1.8 path of the BroadcastJob validating webhook.
	ValidatingPath = "/validate-apps-kruise-io-v1alpha1-broadcastjob"
)

// Handlers returns the BroadcastJob defaulting and validating handlers by their 1.8 paths.
func Handlers(mgr ctrl.Manager, _ setup.Deps) map[string]admission.Handler {
	dec := admission.NewDecoder(mgr.GetScheme())
	return map[string]admission.Handler{
		MutatingPath:   NewMutatingHandler(dec),
		ValidatingPath: NewValidatingHandler(dec),
	}
}

// MutatingHandler defaults BroadcastJobs on create and update.
type MutatingHandler struct{ decoder admission.Decoder }

// NewMutatingHandler returns the defaulting handler.
func NewMutatingHandler(dec admission.Decoder) *MutatingHandler {
	return &MutatingHandler{decoder: dec}
}

// Handle answers with a JSON patch of the defaults, or Allowed when nothing needs setting.
func (h *MutatingHandler) Handle(_ context.Context, req admission.Request) admission.Response {
	job := &appsv1alpha1.BroadcastJob{}
	if err := h.decoder.Decode(req, job); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode broadcastjob: %w", err))
	}
	before := job.DeepCopy()
	setDefaults(job)
	if apiequality.Semantic.DeepEqual(before, job) {
		return admission.Allowed("")
	}
	raw, err := json.Marshal(job)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("encode broadcastjob: %w", err))
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// ValidatingHandler validates BroadcastJobs on create and update.
type ValidatingHandler struct{ decoder admission.Decoder }

// NewValidatingHandler returns the validating handler.
func NewValidatingHandler(dec admission.Decoder) *ValidatingHandler {
	return &ValidatingHandler{decoder: dec}
}

// Handle refuses an invalid BroadcastJob with every field error. An update of a job being
// deleted always passes, so that its finalizers can be removed.
func (h *ValidatingHandler) Handle(_ context.Context, req admission.Request) admission.Response {
	switch req.Operation {
	case admissionv1.Create, admissionv1.Update:
	default:
		return admission.Allowed("")
	}
	job := &appsv1alpha1.BroadcastJob{}
	if err := h.decoder.Decode(req, job); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode broadcastjob: %w", err))
	}
	if job.DeletionTimestamp != nil {
		return admission.Allowed("")
	}
	if errs := validateBroadcastJob(job); len(errs) > 0 {
		return admission.Errored(http.StatusUnprocessableEntity, errs.ToAggregate())
	}
	return admission.Allowed("")
}
