package sidecarset

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
)

const (
	// MutatingPath is the 1.8 path of the SidecarSet defaulting webhook.
	MutatingPath = "/mutate-apps-kruise-io-v1alpha1-sidecarset"
	// ValidatingPath is the 1.8 path of the SidecarSet validating webhook.
	ValidatingPath = "/validate-apps-kruise-io-v1alpha1-sidecarset"
)

// Handlers returns the SidecarSet defaulting and validating handlers by their 1.8 paths.
func Handlers(mgr ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	dec := admission.NewDecoder(mgr.GetScheme())
	return map[string]admission.Handler{
		MutatingPath:   NewMutatingHandler(dec),
		ValidatingPath: NewValidatingHandler(dec, mgr.GetClient(), d.Gates),
	}
}

// MutatingHandler defaults SidecarSets on create and update.
type MutatingHandler struct{ decoder admission.Decoder }

// NewMutatingHandler returns the defaulting handler.
func NewMutatingHandler(dec admission.Decoder) *MutatingHandler {
	return &MutatingHandler{decoder: dec}
}

// Handle answers with a JSON patch of the defaults and hashes, or Allowed when nothing changes.
func (h *MutatingHandler) Handle(_ context.Context, req admission.Request) admission.Response {
	switch req.Operation {
	case admissionv1.Create, admissionv1.Update:
	default:
		return admission.Allowed("")
	}
	s := &appsv1alpha1.SidecarSet{}
	if err := h.decoder.Decode(req, s); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode sidecarset: %w", err))
	}
	before := s.DeepCopy()
	if err := setDefaults(s); err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if apiequality.Semantic.DeepEqual(before, s) {
		return admission.Allowed("")
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("encode sidecarset: %w", err))
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// ValidatingHandler validates SidecarSets on create and update.
type ValidatingHandler struct {
	decoder admission.Decoder
	reader  client.Reader
	gates   featuregate.FeatureGate
}

// NewValidatingHandler returns the validating handler. reader lists the other SidecarSets and
// reads namespaces (the manager's cache); nil gates means the 1.8 defaults.
func NewValidatingHandler(dec admission.Decoder, reader client.Reader, gates featuregate.FeatureGate) *ValidatingHandler {
	if gates == nil {
		gates = features.NewGate()
	}
	return &ValidatingHandler{decoder: dec, reader: reader, gates: gates}
}

// Handle refuses an invalid SidecarSet with every field error.
func (h *ValidatingHandler) Handle(ctx context.Context, req admission.Request) admission.Response {
	switch req.Operation {
	case admissionv1.Create, admissionv1.Update:
	default:
		return admission.Allowed("")
	}
	s := &appsv1alpha1.SidecarSet{}
	if err := h.decoder.Decode(req, s); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode sidecarset: %w", err))
	}
	var old *appsv1alpha1.SidecarSet
	if req.Operation == admissionv1.Update {
		old = &appsv1alpha1.SidecarSet{}
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode old sidecarset: %w", err))
		}
	}
	list := &appsv1alpha1.SidecarSetList{}
	if err := h.reader.List(ctx, list); err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("list sidecarsets: %w", err))
	}
	others := make([]*appsv1alpha1.SidecarSet, 0, len(list.Items))
	for i := range list.Items {
		others = append(others, &list.Items[i])
	}
	r := rules{
		patchMetadata: h.gates.Enabled(features.SidecarSetPatchPodMetadataDefaultsAllowed),
		namespaceLabels: func(name string) (labels.Set, bool) {
			ns := &corev1.Namespace{}
			if err := h.reader.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
				return nil, false
			}
			return ns.Labels, true
		},
	}
	if errs := validateSidecarSet(s, old, others, r); len(errs) > 0 {
		return admission.Errored(http.StatusUnprocessableEntity, errs.ToAggregate())
	}
	return admission.Allowed("")
}
