package persistentpodstate

import (
	"context"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// ValidatingPath is the 1.8 path of the PersistentPodState validating webhook (unversioned, as
// in 1.8).
const ValidatingPath = "/validate-apps-kruise-io-persistentpodstate"

// Handlers returns the PersistentPodState validating handler by its 1.8 path.
func Handlers(mgr ctrl.Manager, _ setup.Deps) map[string]admission.Handler {
	return map[string]admission.Handler{ValidatingPath: NewHandler(mgr.GetAPIReader())}
}

// Handler refuses PersistentPodStates that break a rule, with every field error.
type Handler struct {
	decoder admission.Decoder
	// others lists the namespace's PersistentPodStates, live, so two created together cannot
	// both claim one workload unseen by a cache.
	others client.Reader
}

// NewHandler returns the handler.
func NewHandler(others client.Reader) *Handler {
	return &Handler{decoder: admission.NewDecoder(apis.NewScheme()), others: others}
}

// Handle answers one admission request.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	pps := &appsv1alpha1.PersistentPodState{}
	if err := h.decoder.Decode(req, pps); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode persistentpodstate: %w", err))
	}
	if pps.Namespace == "" {
		pps.Namespace = req.Namespace
	}
	var old *appsv1alpha1.PersistentPodState
	if req.Operation == admissionv1.Update {
		old = &appsv1alpha1.PersistentPodState{}
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode old persistentpodstate: %w", err))
		}
		if pps.DeletionTimestamp != nil {
			return admission.Allowed("")
		}
	}
	list := &appsv1alpha1.PersistentPodStateList{}
	if err := h.others.List(ctx, list, client.InNamespace(pps.Namespace)); err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("list persistentpodstates: %w", err))
	}
	if errs := validatePersistentPodState(pps, old, list.Items); len(errs) > 0 {
		return admission.Errored(http.StatusUnprocessableEntity, errs.ToAggregate())
	}
	return admission.Allowed("")
}
