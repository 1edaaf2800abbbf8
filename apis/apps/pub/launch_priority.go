package pub

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
