package uniteddeployment

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
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
)

const (
	// MutatingPath is the 1.8 path of the UnitedDeployment defaulting webhook.
	MutatingPath = "/mutate-apps-kruise-io-v1alpha1-uniteddeployment"
	// ValidatingPath is the 1.8 path of the UnitedDeployment validating webhook.
	ValidatingPath = "/validate-apps-kruise-io-v1alpha1-uniteddeployment"
)

// Handlers returns the UnitedDeployment defaulting and validating handlers by their 1.8 paths.
func Handlers(mgr ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	dec := admission.NewDecoder(mgr.GetScheme())
	return map[string]admission.Handler{
		MutatingPath:   &MutatingHandler{decoder: dec},
		ValidatingPath: &ValidatingHandler{decoder: dec, guard: deletionprotection.GuardFor(mgr, d)},
	}
}

// MutatingHandler defaults UnitedDeployments on create and update.
type MutatingHandler struct {
	decoder admission.Decoder
}

// Handle answers with a JSON patch of the defaults, or Allowed when nothing needs setting.
func (h *MutatingHandler) Handle(_ context.Context, req admission.Request) admission.Response {
	ud := &appsv1alpha1.UnitedDeployment{}
	if err := h.decoder.Decode(req, ud); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode uniteddeployment: %w", err))
	}
	before := ud.DeepCopy()
	setDefaults(ud)
	if apiequality.Semantic.DeepEqual(before, ud) {
		return admission.Allowed("")
	}
	raw, err := json.Marshal(ud)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("encode uniteddeployment: %w", err))
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// ValidatingHandler validates UnitedDeployments on create and update and enforces deletion
// protection.
type ValidatingHandler struct {
	decoder admission.Decoder
	// guard enforces deletion protection.
	guard *deletionprotection.Guard
}

// Handle refuses an invalid UnitedDeployment with every field error, or a protected deletion.
func (h *ValidatingHandler) Handle(ctx context.Context, req admission.Request) admission.Response {
	switch req.Operation {
	case admissionv1.Create, admissionv1.Update:
	case admissionv1.Delete:
		return h.handleDelete(ctx, req)
	default:
		return admission.Allowed("")
	}
	ud := &appsv1alpha1.UnitedDeployment{}
	if err := h.decoder.Decode(req, ud); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode uniteddeployment: %w", err))
	}
	var old *appsv1alpha1.UnitedDeployment
	if req.Operation == admissionv1.Update {
		old = &appsv1alpha1.UnitedDeployment{}
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode old uniteddeployment: %w", err))
		}
	}
	if errs := validate(ud, old); len(errs) > 0 {
		return admission.Errored(http.StatusUnprocessableEntity, errs.ToAggregate())
	}
	return admission.Allowed("")
}

func (h *ValidatingHandler) handleDelete(ctx context.Context, req admission.Request) admission.Response {
	if !h.guard.Checks(req) {
		return admission.Allowed("")
	}
	old := &appsv1alpha1.UnitedDeployment{}
	if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode old uniteddeployment: %w", err))
	}
	return h.guard.Answer(ctx, req, validateDeletion(old))
}
