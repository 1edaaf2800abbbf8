package containerrecreaterequest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/features"
)

// MutatingPath is the 1.8 path of the ContainerRecreateRequest mutating webhook.
const MutatingPath = "/mutate-apps-kruise-io-v1alpha1-containerrecreaterequest"

// Handlers returns the ContainerRecreateRequest handler by its 1.8 path. It reads the target
// pod through the manager's API reader: a request is usually created right after the pod
// changed, and a stale cache would record an old container ID.
func Handlers(mgr ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	return map[string]admission.Handler{
		MutatingPath: NewMutatingHandler(admission.NewDecoder(mgr.GetScheme()), mgr.GetAPIReader(), d.Gates),
	}
}

// MutatingHandler checks, defaults and completes ContainerRecreateRequests.
type MutatingHandler struct {
	decoder admission.Decoder
	reader  client.Reader
	gates   featuregate.FeatureGate
}

// NewMutatingHandler returns the handler; reader gets the target pod.
func NewMutatingHandler(dec admission.Decoder, reader client.Reader, gates featuregate.FeatureGate) *MutatingHandler {
	if gates == nil {
		gates = features.NewGate()
	}
	return &MutatingHandler{decoder: dec, reader: reader, gates: gates}
}

// Handle refuses requests while kruise-daemon is gated off, checks updates for immutable
// fields, and answers a create with a patch that completes the request from its pod.
func (h *MutatingHandler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if !h.gates.Enabled(features.KruiseDaemon) {
		return admission.Errored(http.StatusForbidden, fmt.Errorf("feature-gate %s is not enabled", features.KruiseDaemon))
	}
	crr := &appsv1alpha1.ContainerRecreateRequest{}
	if err := h.decoder.Decode(req, crr); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode containerrecreaterequest: %w", err))
	}
	// The pod is read only in the namespace the apiserver names in the request; an object that
	// claims another one is not a request the apiserver sent.
	if errs := admit.ValidateNamespace(req.Namespace, crr.Namespace); len(errs) > 0 {
		return admission.Errored(http.StatusBadRequest, errs.ToAggregate())
	}
	switch req.Operation {
	case admissionv1.Update:
		old := &appsv1alpha1.ContainerRecreateRequest{}
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode old containerrecreaterequest: %w", err))
		}
		if errs := validateUpdate(crr, old); len(errs) > 0 {
			return admission.Errored(http.StatusForbidden, errs.ToAggregate())
		}
		return admission.Allowed("")
	case admissionv1.Create:
	default:
		return admission.Allowed("")
	}

	before := crr.DeepCopy()
	if errs := validateCreate(crr); len(errs) > 0 {
		return admission.Errored(http.StatusBadRequest, errs.ToAggregate())
	}
	setDefaults(crr)
	pod := &corev1.Pod{}
	err := h.reader.Get(ctx, types.NamespacedName{Namespace: req.Namespace, Name: crr.Spec.PodName}, pod)
	switch {
	case apierrors.IsNotFound(err):
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("spec.podName: pod %s not found in namespace %s", crr.Spec.PodName, req.Namespace))
	case err != nil:
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("get pod %s/%s: %w", req.Namespace, crr.Spec.PodName, err))
	}
	if errs := fillFromPod(crr, pod); len(errs) > 0 {
		return admission.Errored(http.StatusBadRequest, errs.ToAggregate())
	}
	if apiequality.Semantic.DeepEqual(before, crr) {
		return admission.Allowed("")
	}
	raw, err := json.Marshal(crr)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("encode containerrecreaterequest: %w", err))
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}
