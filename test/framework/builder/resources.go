package builder

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// CPUMemory is a container's cpu and memory requests and limits, as quantities ("100m", "64Mi").
func CPUMemory(cpuRequest, memoryRequest, cpuLimit, memoryLimit string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuRequest), corev1.ResourceMemory: resource.MustParse(memoryRequest)},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuLimit), corev1.ResourceMemory: resource.MustParse(memoryLimit)},
	}
}

// HasCPUMemory tells whether c asks for the cpu and memory requests and limits of want.
func HasCPUMemory(c corev1.Container, want corev1.ResourceRequirements) bool {
	for _, l := range []struct{ want, got corev1.ResourceList }{{want.Requests, c.Resources.Requests}, {want.Limits, c.Resources.Limits}} {
		for name, q := range l.want {
			if g, ok := l.got[name]; !ok || g.Cmp(q) != 0 {
				return false
			}
		}
	}
	return true
}
