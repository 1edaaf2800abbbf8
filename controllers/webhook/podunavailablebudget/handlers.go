package podunavailablebudget

import (
	"context"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
)

// ValidatingPath is the 1.8 path of the PodUnavailableBudget validating webhook (unversioned).
const ValidatingPath = "/validate-policy-kruise-io-podunavailablebudget"

// Handlers returns the PodUnavailableBudget validating handler by its 1.8 path.
func Handlers(mgr ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	return map[string]admission.Handler{ValidatingPath: NewHandler(mgr.GetAPIReader(), d.Gates)}
}

// Handler refuses PodUnavailableBudgets that break a rule, with every field error.
type Handler struct {
	decoder admission.Decoder
	// others lists the namespace's budgets, live, so two created together cannot both claim
	// one workload unseen by a cache.
	others client.Reader
	gates  featuregate.FeatureGate
}

// NewHandler returns the handler; nil gates means the 1.8 defaults.
func NewHandler(others client.Reader, gates featuregate.FeatureGate) *Handler {
	if gates == nil {
		gates = features.NewGate()
	}
	return &Handler{decoder: admission.NewDecoder(apis.NewScheme()), others: others, gates: gates}
}

// Handle answers one admission request.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	if !h.gates.Enabled(features.PodUnavailableBudgetDeleteGate) && !h.gates.Enabled(features.PodUnavailableBudgetUpdateGate) {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("PodUnavailableBudget is off: turn on feature gate %s or %s",
			features.PodUnavailableBudgetDeleteGate, features.PodUnavailableBudgetUpdateGate))
	}
	pub := &policyv1alpha1.PodUnavailableBudget{}
	if err := h.decoder.Decode(req, pub); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode podunavailablebudget: %w", err))
	}
	if pub.Namespace == "" {
		pub.Namespace = req.Namespace
	}
	var old *policyv1alpha1.PodUnavailableBudget
	if req.Operation == admissionv1.Update {
		old = &policyv1alpha1.PodUnavailableBudget{}
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode old podunavailablebudget: %w", err))
		}
		if pub.DeletionTimestamp != nil {
			return admission.Allowed("")
		}
	}
	list := &policyv1alpha1.PodUnavailableBudgetList{}
	if err := h.others.List(ctx, list, client.InNamespace(pub.Namespace)); err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("list podunavailablebudgets: %w", err))
	}
	if errs := validatePub(pub, old, list.Items); len(errs) > 0 {
		return admission.Errored(http.StatusUnprocessableEntity, errs.ToAggregate())
	}
	return admission.Allowed("")
}
