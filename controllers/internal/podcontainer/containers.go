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

// EnvValue is the literal value of c's env variable called name, or "" when c is nil or has no
// such variable.
func EnvValue(c *corev1.Container, name string) string {
	if c == nil {
		return ""
	}
	if i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name }); i >= 0 {
		return c.Env[i].Value
	}
	return ""
}
