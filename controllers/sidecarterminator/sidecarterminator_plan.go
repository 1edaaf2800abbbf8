package sidecarterminator

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcontainer"
)

// plan is what one pass does to a pod whose main containers have finished.
type plan struct {
	// swapImages are the sidecars on a virtual-kubelet node, by name, whose image becomes the
	// one their KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE names.
	swapImages map[string]string
	// stop are the running sidecars the pod's ContainerRecreateRequest stops.
	stop []string
	// terminate, when set, is the phase written on the pod, with the SidecarTerminated
	// condition, before stopIgnoringExitCode are stopped.
	terminate corev1.PodPhase
	// stopIgnoringExitCode are the running sidecars whose exit code must not decide the pod's
	// phase; they are stopped once the phase is written.
	stopIgnoringExitCode []string
}

// interesting tells a pod the SidecarTerminator may have to act on: live, started, not
// restarting its containers forever, with a sidecar still running, and whose main containers
// have exited (Never) or succeeded (OnFailure).
func interesting(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodPending || pod.Spec.RestartPolicy == corev1.RestartPolicyAlways {
		return false
	}
	mains, sidecars := split(pod)
	if len(sidecars) == 0 || finished(pod, sidecars) {
		return false
	}
	switch pod.Spec.RestartPolicy {
	case corev1.RestartPolicyNever:
		return finished(pod, mains)
	case corev1.RestartPolicyOnFailure:
		return succeeded(pod, mains)
	}
	return false
}

// decide is the pure core of the controller: what to do to pod, which runs on a
// virtual-kubelet node when virtual is true. A sidecar on a virtual-kubelet node is stopped only
// by its image; one elsewhere only by a ContainerRecreateRequest.
func decide(pod *corev1.Pod, virtual bool) plan {
	var p plan
	if !interesting(pod) {
		return p
	}
	var normal, ignoringExitCode, byImage []string
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		switch {
		case virtual && stopsByImage(c):
			byImage = append(byImage, c.Name)
		case !virtual && ignoresExitCode(c):
			ignoringExitCode = append(ignoringExitCode, c.Name)
		case !virtual && stopsWhenJobExits(c):
			normal = append(normal, c.Name)
		}
	}
	for _, name := range running(pod, byImage) {
		if p.swapImages == nil {
			p.swapImages = map[string]string{}
		}
		p.swapImages[name] = podcontainer.EnvValue(podcontainer.Spec(pod, name), appsv1alpha1.KruiseTerminateSidecarWithImageEnv)
	}
	p.stop = running(pod, normal)
	if len(ignoringExitCode) == 0 || !finished(pod, normal) || !finished(pod, byImage) {
		return p
	}
	if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		mains, _ := split(pod)
		p.terminate = corev1.PodFailed
		if succeeded(pod, mains) {
			p.terminate = corev1.PodSucceeded
		}
	}
	p.stopIgnoringExitCode = running(pod, ignoringExitCode)
	return p
}

// split parts the pod's app containers into main containers and sidecars (containers the
// SidecarTerminator stops, by a ContainerRecreateRequest or by their image).
func split(pod *corev1.Pod) (mains, sidecars []string) {
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if stopsWhenJobExits(c) || stopsByImage(c) {
			sidecars = append(sidecars, c.Name)
		} else {
			mains = append(mains, c.Name)
		}
	}
	return mains, sidecars
}

func stopsWhenJobExits(c *corev1.Container) bool {
	return strings.EqualFold(podcontainer.EnvValue(c, appsv1alpha1.KruiseTerminateSidecarEnv), "true")
}

func ignoresExitCode(c *corev1.Container) bool {
	return stopsWhenJobExits(c) && strings.EqualFold(podcontainer.EnvValue(c, appsv1alpha1.KruiseIgnoreContainerExitCodeEnv), "true")
}

func stopsByImage(c *corev1.Container) bool {
	return podcontainer.EnvValue(c, appsv1alpha1.KruiseTerminateSidecarWithImageEnv) != ""
}

// finished tells whether every container named has terminated. Until the kubelet reports a
// status for every app container nothing counts as finished.
func finished(pod *corev1.Pod, names []string) bool {
	return allStatuses(pod, names, func(s *corev1.ContainerStatus) bool { return s.State.Terminated != nil })
}

// succeeded tells whether every container named has terminated with exit code 0.
func succeeded(pod *corev1.Pod, names []string) bool {
	return allStatuses(pod, names, func(s *corev1.ContainerStatus) bool {
		return s.State.Terminated != nil && s.State.Terminated.ExitCode == 0
	})
}

func allStatuses(pod *corev1.Pod, names []string, ok func(*corev1.ContainerStatus) bool) bool {
	if len(pod.Spec.Containers) != len(pod.Status.ContainerStatuses) {
		return false
	}
	for i := range pod.Status.ContainerStatuses {
		s := &pod.Status.ContainerStatuses[i]
		if slices.Contains(names, s.Name) && !ok(s) {
			return false
		}
	}
	return true
}

// running are the containers named that have not terminated, in the order named.
func running(pod *corev1.Pod, names []string) []string {
	var out []string
	for _, name := range names {
		if s := podcontainer.Status(pod, name); s != nil && s.State.Terminated != nil {
			continue
		}
		out = append(out, name)
	}
	return out
}
