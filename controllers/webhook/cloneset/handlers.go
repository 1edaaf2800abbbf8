package cloneset

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
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admissionscope"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	"github.com/kruise-addon/kruise-addon/features"
)

const (
	// MutatingPath is the 1.8 path of the CloneSet defaulting webhook.
	MutatingPath = "/mutate-apps-kruise-io-v1alpha1-cloneset"
	// ValidatingPath is the 1.8 path of the CloneSet validating webhook.
	ValidatingPath = "/validate-apps-kruise-io-v1alpha1-cloneset"
)

// Handlers returns the CloneSet defaulting and validating handlers by their 1.8 paths. The
// validating handler reads the pods named in podsToDelete from the manager's cache, so that a
// list of any length costs no API call per name; see NewValidatingHandler for the few names it
// looks up in the API.
func Handlers(mgr ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	dec := admission.NewDecoder(mgr.GetScheme())
	return map[string]admission.Handler{
		MutatingPath:   NewMutatingHandler(dec, d.Gates),
		ValidatingPath: NewValidatingHandler(dec, mgr.GetCache(), mgr.GetAPIReader(), d.Gates).WithGuard(deletionprotection.GuardFor(mgr, d)),
	}
}

// MutatingHandler defaults CloneSets on create and update.
type MutatingHandler struct {
	decoder admission.Decoder
	gates   featuregate.FeatureGate
}

// NewMutatingHandler returns the defaulting handler.
func NewMutatingHandler(dec admission.Decoder, gates featuregate.FeatureGate) *MutatingHandler {
	return &MutatingHandler{decoder: dec, gates: orDefaults(gates)}
}

// Handle answers with a JSON patch of the defaults, or Allowed when nothing needs setting.
func (h *MutatingHandler) Handle(_ context.Context, req admission.Request) admission.Response {
	cs := &appsv1alpha1.CloneSet{}
	if err := h.decoder.Decode(req, cs); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode cloneset: %w", err))
	}
	withTemplate := !h.gates.Enabled(features.TemplateNoDefaults)
	if withTemplate && req.Operation == admissionv1.Update {
		old := &appsv1alpha1.CloneSet{}
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode old cloneset: %w", err))
		}
		// An update that leaves the template alone keeps it as stored, so that a new default
		// in a later release does not roll every pod.
		withTemplate = !apiequality.Semantic.DeepEqual(cs.Spec.Template, old.Spec.Template)
	}
	before := cs.DeepCopy()
	setDefaults(cs, withTemplate)
	if apiequality.Semantic.DeepEqual(before, cs) {
		return admission.Allowed("")
	}
	raw, err := json.Marshal(cs)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("encode cloneset: %w", err))
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// liveLookups is the most podsToDelete names a request may have looked up in the API when the
// cache does not hold them: a pod created a moment before it is listed is found even if the
// cache has not seen it yet, while a long list of names that are no pods costs no more than
// this many API reads.
const liveLookups = 5

// ValidatingHandler validates CloneSets on create and update and enforces deletion protection.
type ValidatingHandler struct {
	decoder admission.Decoder
	// cached reads pods from the manager's informer; live reads the API.
	cached, live client.Reader
	gates        featuregate.FeatureGate
	// guard enforces deletion protection.
	guard *deletionprotection.Guard
}

// NewValidatingHandler returns the validating handler. It gets the pods named in
// spec.scaleStrategy.podsToDelete from cached; when no more than liveLookups of them are
// missing there, it looks those up through live.
func NewValidatingHandler(dec admission.Decoder, cached, live client.Reader, gates featuregate.FeatureGate) *ValidatingHandler {
	gates = orDefaults(gates)
	return &ValidatingHandler{decoder: dec, cached: cached, live: live, gates: gates, guard: deletionprotection.NewGuard(gates, nil, false)}
}

// WithGuard replaces the deletion protection guard, which by default never lets a refusal
// through, and returns h.
func (h *ValidatingHandler) WithGuard(g *deletionprotection.Guard) *ValidatingHandler {
	h.guard = g
	return h
}

// Handle refuses an invalid CloneSet with every field error, or a protected deletion.
func (h *ValidatingHandler) Handle(ctx context.Context, req admission.Request) admission.Response {
	switch req.Operation {
	case admissionv1.Create, admissionv1.Update:
	case admissionv1.Delete:
		return h.handleDelete(ctx, req)
	default:
		return admission.Allowed("")
	}
	cs := &appsv1alpha1.CloneSet{}
	if err := h.decoder.Decode(req, cs); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode cloneset: %w", err))
	}
	// Pods are read only in the namespace the apiserver names in the request; an object that
	// claims another one is not a request the apiserver sent.
	if errs := admissionscope.ValidateNamespace(req.Namespace, cs.Namespace); len(errs) > 0 {
		return admission.Errored(http.StatusBadRequest, errs.ToAggregate())
	}
	var old *appsv1alpha1.CloneSet
	if req.Operation == admissionv1.Update {
		old = &appsv1alpha1.CloneSet{}
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode old cloneset: %w", err))
		}
	}
	pods, err := h.podsToDelete(ctx, req.Namespace, cs, old)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if errs := validateCloneSet(cs, old, rules{shortHash: h.gates.Enabled(features.CloneSetShortHash)}, pods...); len(errs) > 0 {
		return admission.Errored(http.StatusUnprocessableEntity, errs.ToAggregate())
	}
	return admission.Allowed("")
}

// podsToDelete gets the pods of namespace newly listed in podsToDelete, from the cache and, when
// few are missing there, from the API; missing ones are left out for the validation to report.
func (h *ValidatingHandler) podsToDelete(ctx context.Context, namespace string, cs, old *appsv1alpha1.CloneSet) ([]*corev1.Pod, error) {
	names := sets.New(cs.Spec.ScaleStrategy.PodsToDelete...)
	if old != nil {
		names.Delete(old.Spec.ScaleStrategy.PodsToDelete...)
	}
	var pods []*corev1.Pod
	var missing []string
	get := func(r client.Reader, name string) (bool, error) {
		pod := &corev1.Pod{}
		err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, pod)
		switch {
		case apierrors.IsNotFound(err):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("get pod %s/%s: %w", namespace, name, err)
		}
		pods = append(pods, pod)
		return true, nil
	}
	for _, name := range sets.List(names) {
		found, err := get(h.cached, name)
		if err != nil {
			return nil, err
		}
		if !found {
			missing = append(missing, name)
		}
	}
	if len(missing) > liveLookups {
		return pods, nil
	}
	for _, name := range missing {
		if _, err := get(h.live, name); err != nil {
			return nil, err
		}
	}
	return pods, nil
}

func (h *ValidatingHandler) handleDelete(ctx context.Context, req admission.Request) admission.Response {
	if !h.guard.Checks(req) {
		return admission.Allowed("")
	}
	old := &appsv1alpha1.CloneSet{}
	if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode old cloneset: %w", err))
	}
	return h.guard.Answer(ctx, req, validateDeletion(old))
}

// orDefaults stands in the 1.8 defaults for a missing gate set.
func orDefaults(g featuregate.FeatureGate) featuregate.FeatureGate {
	if g == nil {
		return features.NewGate()
	}
	return g
}
