package launchpriority

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/internal/podadmission"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Step is the container launch priority step of /mutate-pod. It runs after SidecarSet
// injection, so sidecars injected in front of the app containers take part in the order.
type Step struct{}

// StepFactory builds the step.
func StepFactory(ctrl.Manager, setup.Deps) podadmission.Step { return Step{} }

// Name names the step.
func (Step) Name() string { return "container launch priority" }

// Mutate adds the barrier env to a pod that asks for ordered launch. A pod created through
// generateName is named here, as 1.8 does, since its env must name its barrier ConfigMap.
func (Step) Mutate(_ context.Context, _ admission.Request, pod *corev1.Pod) (bool, error) {
	if _, ordered, err := priorities(pod); err != nil || !ordered {
		return false, err
	}
	if pod.Name == "" && pod.GenerateName != "" {
		pod.Name = pod.GenerateName + utilrand.String(5)
	}
	return AddBarriers(pod)
}
