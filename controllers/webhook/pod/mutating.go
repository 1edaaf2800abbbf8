package pod

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
)

// MutatingPath is the 1.8 path of the pod mutating webhook.
const MutatingPath = "/mutate-pod"

// Handlers returns the pod mutating handler by its 1.8 path.
func Handlers(mgr ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	return map[string]admission.Handler{
		MutatingPath: NewMutatingHandler(admission.NewDecoder(mgr.GetScheme()), d.Gates),
	}
}

// MutatingHandler mutates pods on admission.
type MutatingHandler struct {
	decoder admission.Decoder
	gates   featuregate.FeatureGate
}

// NewMutatingHandler returns the pod mutating handler; nil gates means the 1.8 defaults.
func NewMutatingHandler(dec admission.Decoder, gates featuregate.FeatureGate) *MutatingHandler {
	if gates == nil {
		gates = features.NewGate()
	}
	return &MutatingHandler{decoder: dec, gates: gates}
}

// Handle answers with a JSON patch adding the readiness gates, or Allowed when the pod needs
// none. Only creations are mutated: readiness gates cannot change afterwards.
func (h *MutatingHandler) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create || req.SubResource != "" {
		return admission.Allowed("")
	}
	pod := &corev1.Pod{}
	if err := h.decoder.Decode(req, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode pod: %w", err))
	}
	gates := readinessGates(pod, h.gates.Enabled(features.KruisePodReadinessGate))
	if !addReadinessGates(pod, gates...) {
		return admission.Allowed("")
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("encode pod: %w", err))
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// updatesInPlace tells the apps.kruise.io workloads that update their pods in place and so
// gate them on InPlaceUpdateReady.
func updatesInPlace(kind string) bool {
	switch kind {
	case "CloneSet", "StatefulSet", "DaemonSet":
		return true
	}
	return false
}

// readinessGates returns the gates a new pod needs, in order:
//   - InPlaceUpdateReady when its controller is an apps.kruise.io CloneSet, StatefulSet or
//     DaemonSet (their controllers add it too; adding it here as well costs nothing);
//   - KruisePodReady when its controller is any apps.kruise.io kind, or for every pod when
//     the KruisePodReadinessGate feature is on.
func readinessGates(pod *corev1.Pod, allPodsGate bool) []corev1.PodConditionType {
	var gates []corev1.PodConditionType
	owner := metav1.GetControllerOf(pod)
	byKruise := false
	if owner != nil {
		gv, err := schema.ParseGroupVersion(owner.APIVersion)
		byKruise = err == nil && gv.Group == appsv1alpha1.GroupVersion.Group
	}
	if byKruise && updatesInPlace(owner.Kind) {
		gates = append(gates, appspub.InPlaceUpdateReady)
	}
	if byKruise || allPodsGate {
		gates = append(gates, appspub.KruisePodReadyConditionType)
	}
	return gates
}

// addReadinessGates appends the gates the pod lacks and reports whether it added any.
func addReadinessGates(pod *corev1.Pod, gates ...corev1.PodConditionType) bool {
	changed := false
	for _, g := range gates {
		if hasGate(pod, g) {
			continue
		}
		pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: g})
		changed = true
	}
	return changed
}

func hasGate(pod *corev1.Pod, t corev1.PodConditionType) bool {
	for _, g := range pod.Spec.ReadinessGates {
		if g.ConditionType == t {
			return true
		}
	}
	return false
}
