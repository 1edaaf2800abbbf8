package statefulset

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admissionscope"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
)

const (
	// MutatingPath is the 1.8 path of the StatefulSet defaulting webhook, for both versions.
	MutatingPath = "/mutate-apps-kruise-io-statefulset"
	// ValidatingPath is the 1.8 path of the StatefulSet validating webhook, for both versions.
	ValidatingPath = "/validate-apps-kruise-io-statefulset"
)

// Handlers returns the StatefulSet defaulting and validating handlers by their 1.8 paths.
func Handlers(mgr ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	return map[string]admission.Handler{
		MutatingPath:   &MutatingHandler{gates: d.Gates},
		ValidatingPath: &ValidatingHandler{guard: deletionprotection.GuardFor(mgr, d)},
	}
}

// decode reads a StatefulSet of either served version: v1alpha1 and v1beta1 have the same JSON
// shape, so both decode into the storage version's type, and a patch computed on it applies to
// the object as sent.
func decode(raw []byte) (*appsv1beta1.StatefulSet, error) {
	set := &appsv1beta1.StatefulSet{}
	if err := json.Unmarshal(raw, set); err != nil {
		return nil, fmt.Errorf("decode statefulset: %w", err)
	}
	return set, nil
}

// MutatingHandler defaults StatefulSets on create and update.
type MutatingHandler struct {
	gates featuregate.FeatureGate
}

// Handle answers with a JSON patch of the defaults, or Allowed when nothing needs setting.
func (h *MutatingHandler) Handle(_ context.Context, req admission.Request) admission.Response {
	set, err := decode(req.Object.Raw)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	before := set.DeepCopy()
	setDefaults(&set.Spec, h.gates)
	if apiequality.Semantic.DeepEqual(before, set) {
		return admission.Allowed("")
	}
	raw, err := json.Marshal(set)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("encode statefulset: %w", err))
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// ValidatingHandler validates StatefulSets on create and update and enforces deletion
// protection.
type ValidatingHandler struct {
	// guard enforces deletion protection.
	guard *deletionprotection.Guard
}

// Handle refuses an invalid StatefulSet with every field error, or a protected deletion.
func (h *ValidatingHandler) Handle(ctx context.Context, req admission.Request) admission.Response {
	switch req.Operation {
	case admissionv1.Create, admissionv1.Update:
	case admissionv1.Delete:
		if !h.guard.Checks(req) {
			return admission.Allowed("")
		}
		old, err := decode(req.OldObject.Raw)
		if err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		return h.guard.Answer(ctx, req, validateDeletion(old))
	default:
		return admission.Allowed("")
	}
	set, err := decode(req.Object.Raw)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if errs := admissionscope.ValidateNamespace(req.Namespace, set.Namespace); len(errs) > 0 {
		return admission.Errored(http.StatusBadRequest, errs.ToAggregate())
	}
	var old *appsv1beta1.StatefulSet
	if req.Operation == admissionv1.Update {
		if old, err = decode(req.OldObject.Raw); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
	}
	if errs := validateStatefulSet(set, old); len(errs) > 0 {
		return admission.Errored(http.StatusUnprocessableEntity, errs.ToAggregate())
	}
	return admission.Allowed("")
}
