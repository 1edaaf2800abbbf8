package podadmission

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Step is one mutation of /mutate-pod. The handler decodes the pod once and runs every step on
// it in order; the pod the last step leaves is the one admitted.
type Step interface {
	// Name names the step in errors and logs, e.g. "sidecarset".
	Name() string
	// Mutate changes pod in place and reports whether it changed anything. An error refuses the
	// pod's creation; the handler names the step in the message.
	Mutate(ctx context.Context, req admission.Request, pod *corev1.Pod) (bool, error)
}

// StepFactory builds a step from the manager's parts; it returns nil when the step is off (its
// gate is off, say).
type StepFactory func(mgr ctrl.Manager, d setup.Deps) Step

// Op is what an admission request does to a pod.
type Op string

// The operations /validate-pod sees (its rules are pods UPDATE and DELETE, pods/eviction CREATE).
const (
	OpUpdate Op = "Update"
	OpDelete Op = "Delete"
	OpEvict  Op = "Evict"
)

// Attempt is one decoded /validate-pod request.
type Attempt struct {
	Op Op
	// Pod is the pod as it is: the old object of an update or delete, the live pod of an eviction.
	Pod *corev1.Pod
	// NewPod is the pod an update would write; nil otherwise.
	NewPod *corev1.Pod
	// DryRun is set when nothing will be persisted, so no check may record anything.
	DryRun bool
}

// Check is one check of /validate-pod. The handler decodes the request once and runs every
// check in order; the first refusal or error ends the request.
type Check interface {
	// Name names the check in errors and logs, e.g. "workloadspread".
	Name() string
	// Covers says whether the check looks at op at all. A request no check covers is allowed
	// without being decoded: the in-place update of every pod passes through this webhook, and
	// decoding its two pods was a tenth of the manager's CPU during a rollout.
	Covers(op Op) bool
	// Validate says whether the attempt may go ahead and, when not, why. It is called only with
	// an attempt whose Op the check covers.
	Validate(ctx context.Context, a *Attempt) (allowed bool, reason string, err error)
}

// CheckFactory builds a check from the manager's parts; it returns nil when the check is off.
type CheckFactory func(mgr ctrl.Manager, d setup.Deps) Check

// Build runs each factory for the manager and returns what they built, in order, leaving out
// the nil ones (a factory whose feature is off builds none).
func Build[F ~func(ctrl.Manager, setup.Deps) T, T comparable](mgr ctrl.Manager, d setup.Deps, factories ...F) []T {
	var zero T
	var out []T
	for _, f := range factories {
		if v := f(mgr, d); v != zero {
			out = append(out, v)
		}
	}
	return out
}

// AnnotateJSON sets the pod's annotation key to v encoded as JSON, the form in which steps leave
// data on a pod for whoever acts on it later.
func AnnotateJSON(pod *corev1.Pod, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode annotation %s: %w", key, err)
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[key] = string(raw)
	return nil
}
