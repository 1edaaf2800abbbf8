package pod

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podadmission"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
)

// containerLivenessProbe is one entry of the apps.kruise.io/container-probe-context annotation,
// in 1.8's JSON: the container's name and the liveness probe taken from it.
type containerLivenessProbe struct {
	Name          string       `json:"name"`
	LivenessProbe corev1.Probe `json:"livenessProbe"`
}

// EnhancedLivenessStepFactory builds the EnhancedLivenessProbe step of /mutate-pod; nil while
// the EnhancedLivenessProbe gate is off.
func EnhancedLivenessStepFactory(_ ctrl.Manager, d setup.Deps) podadmission.Step {
	if !d.Gates.Enabled(features.EnhancedLivenessProbe) {
		return nil
	}
	return enhancedLivenessStep{}
}

// enhancedLivenessStep takes the liveness probes off the containers of a pod that asks for it,
// so that the kubelet never restarts them, and keeps them in an annotation.
type enhancedLivenessStep struct{}

func (enhancedLivenessStep) Name() string { return "enhanced liveness probe" }

// Mutate moves the probes of a pod controlled by an apps.kruise.io workload and annotated
// apps.kruise.io/using-enhanced-liveness: "true"; other pods are left as they are, as in 1.8.
func (enhancedLivenessStep) Mutate(ctx context.Context, _ admission.Request, pod *corev1.Pod) (bool, error) {
	if kruiseOwner(pod) == nil || pod.Annotations[appsv1alpha1.AnnotationUsingEnhancedLiveness] != "true" {
		return false, nil
	}
	moved, err := moveLivenessProbes(pod)
	if err != nil || !moved {
		return false, err
	}
	ctrl.LoggerFrom(ctx).V(3).Info("Moved the liveness probes into an annotation", "pod", klog.KObj(pod),
		"annotation", appsv1alpha1.AnnotationNativeContainerProbeContext)
	return true, nil
}

// moveLivenessProbes takes the livenessProbe off every container of pod (init and ephemeral
// containers have none the kubelet restarts on) and writes them, in container order, as the
// JSON list of apps.kruise.io/container-probe-context. It reports whether the pod had any; a
// pod without one keeps its annotations as they are.
func moveLivenessProbes(pod *corev1.Pod) (bool, error) {
	var probes []containerLivenessProbe
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if c.LivenessProbe == nil {
			continue
		}
		probes = append(probes, containerLivenessProbe{Name: c.Name, LivenessProbe: *c.LivenessProbe})
		c.LivenessProbe = nil
	}
	if len(probes) == 0 {
		return false, nil
	}
	if err := podadmission.AnnotateJSON(pod, appsv1alpha1.AnnotationNativeContainerProbeContext, probes); err != nil {
		return false, err
	}
	return true, nil
}
