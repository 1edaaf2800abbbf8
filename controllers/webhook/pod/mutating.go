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
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podadmission"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/features"
)

// MutatingPath is the 1.8 path of the pod mutating webhook.
const MutatingPath = "/mutate-pod"

// Handlers returns a handler set serving /mutate-pod with the readiness-gate step first and then
// the steps the factories build, in order. 1.8's order is readiness gates, WorkloadSpread,
// SidecarSet, container launch priority, PodUnavailableBudget, PersistentPodState.
func Handlers(factories ...podadmission.StepFactory) setup.Webhooks {
	return admit.Webhooks{Name: "pod", Mutating: func(e admit.Env) admission.Handler {
		return NewMutatingHandler(e.Kind.Decoder, e.Gates, podadmission.Build(e.Manager, e.Deps, factories...)...)
	}}.Handlers
}

// MutatingHandler mutates pods on admission.
type MutatingHandler struct {
	decoder admission.Decoder
	steps   []podadmission.Step
}

// NewMutatingHandler returns the pod mutating handler running the readiness-gate step and then
// steps.
func NewMutatingHandler(dec admission.Decoder, gates featuregate.FeatureGate, steps ...podadmission.Step) *MutatingHandler {
	all := append([]podadmission.Step{readinessGateStep{allPods: gates.Enabled(features.KruisePodReadinessGate)}}, steps...)
	return &MutatingHandler{decoder: dec, steps: all}
}

// Handle answers with a JSON patch holding what the steps changed, or Allowed when no step
// changed the pod. Only creations are mutated.
func (h *MutatingHandler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create || req.SubResource != "" {
		return admission.Allowed("")
	}
	pod := &corev1.Pod{}
	if err := h.decoder.Decode(req, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode pod: %w", err))
	}
	// A pod created through generateName, or without a namespace in its body, has the request's.
	if pod.Namespace == "" {
		pod.Namespace = req.Namespace
	}
	changed := false
	for _, s := range h.steps {
		c, err := s.Mutate(ctx, req, pod)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, fmt.Errorf("pod %s: %w", s.Name(), err))
		}
		changed = changed || c
	}
	if !changed {
		return admission.Allowed("")
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("encode pod: %w", err))
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// readinessGateStep adds the readiness gates the add-on's workloads rely on.
type readinessGateStep struct{ allPods bool }

func (readinessGateStep) Name() string { return "readiness gates" }

func (s readinessGateStep) Mutate(_ context.Context, _ admission.Request, pod *corev1.Pod) (bool, error) {
	return addReadinessGates(pod, readinessGates(pod, s.allPods)...), nil
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
