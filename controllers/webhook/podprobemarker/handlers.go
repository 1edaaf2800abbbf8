package podprobemarker

import (
	"context"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
)

// ValidatingPath is the 1.8 path of the PodProbeMarker validating webhook.
const ValidatingPath = "/validate-apps-kruise-io-podprobemarker"

// Handlers returns the PodProbeMarker validating handler by its 1.8 path.
func Handlers(_ ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	return map[string]admission.Handler{ValidatingPath: NewHandler(d.Gates)}
}

// NewHandler returns the handler; nil gates means the 1.8 defaults.
func NewHandler(gates featuregate.FeatureGate) *Handler {
	if gates == nil {
		gates = features.NewGate()
	}
	return &Handler{decoder: admission.NewDecoder(apis.NewScheme()), gates: gates}
}

// Handler validates PodProbeMarkers.
type Handler struct {
	decoder admission.Decoder
	gates   featuregate.FeatureGate
}

// Handle answers one admission request. An update of a marker being deleted always passes, so
// its finalizer can be removed whatever the gates.
func (h *Handler) Handle(_ context.Context, req admission.Request) admission.Response {
	ppm := &appsv1alpha1.PodProbeMarker{}
	if err := h.decoder.Decode(req, ppm); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode podprobemarker: %w", err))
	}
	if ppm.DeletionTimestamp != nil {
		return admission.Allowed("")
	}
	for _, g := range []featuregate.Feature{features.PodProbeMarkerGate, features.KruiseDaemon} {
		if !h.gates.Enabled(g) {
			return admission.Errored(http.StatusForbidden, fmt.Errorf("feature gate %s is not enabled", g))
		}
	}
	var old *appsv1alpha1.PodProbeMarker
	if req.Operation == admissionv1.Update {
		old = &appsv1alpha1.PodProbeMarker{}
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode old podprobemarker: %w", err))
		}
	}
	if errs := validatePodProbeMarker(ppm, old); len(errs) > 0 {
		return admission.Errored(http.StatusUnprocessableEntity, errs.ToAggregate())
	}
	return admission.Allowed("")
}
