package podcontainer

import corev1 "k8s.io/api/core/v1"

// Spec is the container of pod's spec called name, or nil.
func Spec(pod *corev1.Pod, name string) *corev1.Container {
	return named(pod.Spec.Containers, name, func(c *corev1.Container) string { return c.Name })
}

// Status is the status pod reports for its container called name, or nil.
func Status(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	return named(pod.Status.ContainerStatuses, name, func(s *corev1.ContainerStatus) string { return s.Name })
}

// named is the first item whose nameOf is name, or nil.
func named[T any](items []T, name string, nameOf func(*T) string) *T {
	for i := range items {
		if nameOf(&items[i]) == name {
			return &items[i]
		}
	}
	return nil
}
