package pod

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podadmission"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcondition"
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
	// The patch is written from what changed since here (podadmission.Patch), so the request's
	// pod is not encoded again and diffed.
	before := pod.DeepCopy()
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
	patches := podadmission.Patch(before, pod)
	if len(patches) == 0 {
		return admission.Allowed("")
	}
	return admission.Patched("", patches...)
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
	owner := kruiseOwner(pod)
	byKruise := owner != nil
	if byKruise && updatesInPlace(owner.Kind) {
		gates = append(gates, appspub.InPlaceUpdateReady)
	}
	if byKruise || allPodsGate {
		gates = append(gates, appspub.KruisePodReadyConditionType)
	}
	return gates
}

// kruiseOwner returns the pod's controller when it is an apps.kruise.io kind, else nil.
func kruiseOwner(pod *corev1.Pod) *metav1.OwnerReference {
	owner := metav1.GetControllerOfNoCopy(pod)
	if owner == nil {
		return nil
	}
	if gv, err := schema.ParseGroupVersion(owner.APIVersion); err != nil || gv.Group != appsv1alpha1.GroupVersion.Group {
		return nil
	}
	return owner
}

// addReadinessGates appends the gates the pod lacks and reports whether it added any.
func addReadinessGates(pod *corev1.Pod, gates ...corev1.PodConditionType) bool {
	changed := false
	for _, g := range gates {
		changed = podcondition.AddGate(pod, g) || changed
	}
	return changed
}

// ValidatingPath is the 1.8 path of the pod validating webhook.
const ValidatingPath = "/validate-pod"

// ValidatingHandlers returns a handler set serving /validate-pod with the checks the factories
// build, in order. 1.8's order is WorkloadSpread, then PodUnavailableBudget.
func ValidatingHandlers(factories ...podadmission.CheckFactory) setup.Webhooks {
	return admit.Webhooks{Name: "pod", Validating: func(e admit.Env) admission.Handler {
		return NewValidatingHandler(e.Kind.Decoder, e.Manager.GetAPIReader(), podadmission.Build(e.Manager, e.Deps, factories...)...)
	}}.Handlers
}

// ValidatingHandler validates pod updates, deletions and evictions.
type ValidatingHandler struct {
	decoder admission.Decoder
	// pods reads the pod an eviction names; the eviction request carries only its name.
	pods   client.Reader
	checks []podadmission.Check
}

// NewValidatingHandler returns the pod validating handler running checks in order.
func NewValidatingHandler(dec admission.Decoder, pods client.Reader, checks ...podadmission.Check) *ValidatingHandler {
	return &ValidatingHandler{decoder: dec, pods: pods, checks: checks}
}

// Handle decodes the request into an Attempt and runs the checks. Requests it does not cover
// (other subresources, creations) and deletions without an old object are allowed.
func (h *ValidatingHandler) Handle(ctx context.Context, req admission.Request) admission.Response {
	op, ok := opOf(req)
	if !ok || !h.covered(op) {
		return admission.Allowed("")
	}
	a, err := h.attempt(ctx, req, op)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if a == nil {
		return admission.Allowed("")
	}
	for _, c := range h.checks {
		if !c.Covers(a.Op) {
			continue
		}
		ok, reason, err := c.Validate(ctx, a)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, fmt.Errorf("pod %s: %w", c.Name(), err))
		}
		if !ok {
			return admission.Denied(reason)
		}
	}
	return admission.Allowed("")
}

// opOf says what req does to a pod, from its operation and subresource alone; false for a
// request /validate-pod does not check (a status update, a creation).
func opOf(req admission.Request) (podadmission.Op, bool) {
	switch {
	case req.Operation == admissionv1.Update && req.SubResource == "":
		return podadmission.OpUpdate, true
	case req.Operation == admissionv1.Delete && req.SubResource == "":
		return podadmission.OpDelete, true
	case req.Operation == admissionv1.Create && req.SubResource == "eviction":
		return podadmission.OpEvict, true
	}
	return "", false
}

// covered reports whether any check covers op.
func (h *ValidatingHandler) covered(op podadmission.Op) bool {
	for _, c := range h.checks {
		if c.Covers(op) {
			return true
		}
	}
	return false
}

// attempt decodes req, which does op to a pod (opOf); nil means there is nothing to check: a
// deletion without its old object, the eviction of a pod that is gone.
func (h *ValidatingHandler) attempt(ctx context.Context, req admission.Request, op podadmission.Op) (*podadmission.Attempt, error) {
	dry := req.DryRun != nil && *req.DryRun
	switch op {
	case podadmission.OpUpdate:
		oldPod, newPod := &corev1.Pod{}, &corev1.Pod{}
		if err := h.decoder.DecodeRaw(req.OldObject, oldPod); err != nil {
			return nil, fmt.Errorf("decode old pod: %w", err)
		}
		if err := h.decoder.DecodeRaw(req.Object, newPod); err != nil {
			return nil, fmt.Errorf("decode pod: %w", err)
		}
		return &podadmission.Attempt{Op: podadmission.OpUpdate, Pod: oldPod, NewPod: newPod, DryRun: dry}, nil
	case podadmission.OpDelete:
		if len(req.OldObject.Raw) == 0 {
			return nil, nil
		}
		pod := &corev1.Pod{}
		if err := h.decoder.DecodeRaw(req.OldObject, pod); err != nil {
			return nil, fmt.Errorf("decode old pod: %w", err)
		}
		if len(req.Options.Raw) > 0 {
			// Plain JSON: DeleteOptions is not a kind of the manager's scheme.
			opts := &metav1.DeleteOptions{}
			if err := json.Unmarshal(req.Options.Raw, opts); err != nil {
				return nil, fmt.Errorf("decode delete options: %w", err)
			}
			dry = dry || len(opts.DryRun) > 0
		}
		return &podadmission.Attempt{Op: podadmission.OpDelete, Pod: pod, DryRun: dry}, nil
	case podadmission.OpEvict:
		ev := &policyv1.Eviction{}
		// Plain JSON: policy/v1 and v1beta1 evictions have the same shape.
		if err := json.Unmarshal(req.Object.Raw, ev); err != nil {
			return nil, fmt.Errorf("decode eviction: %w", err)
		}
		if ev.DeleteOptions != nil && len(ev.DeleteOptions.DryRun) > 0 {
			dry = true
		}
		pod := &corev1.Pod{}
		if err := h.pods.Get(ctx, types.NamespacedName{Namespace: req.Namespace, Name: req.Name}, pod); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil // the apiserver answers the eviction of a missing pod itself
			}
			return nil, fmt.Errorf("get evicted pod %s/%s: %w", req.Namespace, req.Name, err)
		}
		return &podadmission.Attempt{Op: podadmission.OpEvict, Pod: pod, DryRun: dry}, nil
	}
	return nil, nil
}
