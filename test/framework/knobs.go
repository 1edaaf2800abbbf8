package framework

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Per-pod knobs: annotations a test puts on a pod to change what the simulated kubelet does
// with it. They are read on every sync, so adding or removing one takes effect on a running pod.
const (
	// AnnotationNotReady keeps containers running but not ready, like a failing readiness
	// probe: "true" for every container, or a comma-separated list of container names.
	AnnotationNotReady = "sim.kruise-addon.io/not-ready"
	// AnnotationPhase ends a running pod in the given terminal phase, "Succeeded" (every
	// container exits 0) or "Failed" (every container exits 1), like a finished job or a crash
	// under restartPolicy Never.
	AnnotationPhase = "sim.kruise-addon.io/phase"
	// AnnotationStartDelay overrides the simulator's start delay for this pod (a Go duration).
	AnnotationStartDelay = "sim.kruise-addon.io/start-delay"
	// AnnotationReadyDelay overrides the simulator's ready delay for this pod (a Go duration).
	AnnotationReadyDelay = "sim.kruise-addon.io/ready-delay"
	// AnnotationImageChangeDelay overrides the in-place image change delay for this pod.
	AnnotationImageChangeDelay = "sim.kruise-addon.io/image-change-delay"

	// UnpullableTag is an image tag no simulated node can pull: a container asked to run an
	// image with it (say "agent:unpullable") waits in ImagePullBackOff, not ready, until its
	// spec names another image, as a kubelet does with a missing image.
	UnpullableTag = "unpullable"

	// AnnotationSimulatedNode marks the nodes a simulator created; the value is "true".
	AnnotationSimulatedNode = "sim.kruise-addon.io/simulated"
)

// knobs are a pod's annotations, parsed.
type knobs struct {
	notReadyAll bool
	notReady    map[string]bool // container names
	phase       corev1.PodPhase // "" unless a terminal phase was asked for
}

// podKnobs reads a pod's knobs and applies its delay overrides to t. Values that do not parse
// are ignored, so that a typo shows as the default behaviour rather than a stuck pod.
func podKnobs(pod *corev1.Pod, t timing) (knobs, timing) {
	var k knobs
	a := pod.Annotations
	if v, ok := a[AnnotationNotReady]; ok {
		if v == "true" {
			k.notReadyAll = true
		} else if v != "false" && v != "" {
			k.notReady = map[string]bool{}
			for _, name := range strings.Split(v, ",") {
				k.notReady[strings.TrimSpace(name)] = true
			}
		}
	}
	switch p := corev1.PodPhase(a[AnnotationPhase]); p {
	case corev1.PodSucceeded, corev1.PodFailed:
		k.phase = p
	}
	for ann, d := range map[string]*time.Duration{
		AnnotationStartDelay:       &t.start,
		AnnotationReadyDelay:       &t.ready,
		AnnotationImageChangeDelay: &t.imageChange,
	} {
		if v, ok := a[ann]; ok {
			if parsed, err := time.ParseDuration(v); err == nil && parsed >= 0 {
				*d = parsed
			}
		}
	}
	return k, t
}

// keepsNotReady reports whether the knobs hold this container not ready.
func (k knobs) keepsNotReady(container string) bool {
	return k.notReadyAll || k.notReady[container]
}

// unpullable tells an image the simulated nodes cannot pull (tag UnpullableTag).
func unpullable(image string) bool {
	return strings.HasSuffix(image, ":"+UnpullableTag)
}
