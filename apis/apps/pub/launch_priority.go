package pub

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

const (
	// ContainerLaunchPriorityKey is the pod annotation that asks for ordered container start.
	ContainerLaunchPriorityKey = "apps.kruise.io/container-launch-priority"
	// ContainerLaunchOrdered is the ContainerLaunchPriorityKey value: start containers in the
	// order they are listed.
	ContainerLaunchOrdered = "Ordered"
	// ContainerLaunchPriorityEnvName is the container env var whose integer value ranks
	// its start; higher starts first.
	ContainerLaunchPriorityEnvName = "KRUISE_CONTAINER_PRIORITY"
	// ContainerLaunchBarrierEnvName is the env var, injected from a ConfigMap key, that blocks
	// a container's start until its turn.
	ContainerLaunchBarrierEnvName = "KRUISE_CONTAINER_BARRIER"
	// ContainerLaunchPriorityMin and ContainerLaunchPriorityMax bound the priority values.
	ContainerLaunchPriorityMin = -2147483647
	ContainerLaunchPriorityMax = 2147483647
)

// ContainerLaunchPriority returns the launch priority the pod webhook gave container c, read
// from the key p_<priority> of its KRUISE_CONTAINER_BARRIER env, and false when c has none (its
// pod did not ask for ordered launch). In-place updates change containers in this order too.
func ContainerLaunchPriority(c *corev1.Container) (int, bool) {
	for _, e := range c.Env {
		if e.Name != ContainerLaunchBarrierEnvName || e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil {
			continue
		}
		key := e.ValueFrom.ConfigMapKeyRef.Key
		if !strings.HasPrefix(key, "p_") {
			return 0, false
		}
		p, err := strconv.Atoi(strings.TrimPrefix(key, "p_"))
		return p, err == nil
	}
	return 0, false
}
