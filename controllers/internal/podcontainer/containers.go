package podcontainer

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Spec is the container of pod's spec called name, or nil.
func Spec(pod *corev1.Pod, name string) *corev1.Container {
	if i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == name }); i >= 0 {
		return &pod.Spec.Containers[i]
	}
	return nil
}

// Status is the status pod reports for its container called name, or nil.
func Status(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	if i := slices.IndexFunc(pod.Status.ContainerStatuses, func(s corev1.ContainerStatus) bool { return s.Name == name }); i >= 0 {
		return &pod.Status.ContainerStatuses[i]
	}
	return nil
}
