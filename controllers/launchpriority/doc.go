// Package launchpriority owns container launch priority: a pod annotated
// apps.kruise.io/container-launch-priority: Ordered, or whose containers carry different
// KRUISE_CONTAINER_PRIORITY values, starts its containers in turn. The /mutate-pod step
// (Step) gives each container env KRUISE_CONTAINER_BARRIER read from key p_<priority> of the
// ConfigMap <pod>-barrier; the kubelet holds a container until its key exists. The controller
// creates that ConfigMap, owned by the pod, and adds the next priority's key once every
// container of a higher priority is ready. Priorities and the next key are pure functions.
// In-place updates of the workloads change containers in the same order
// (controllers/internal/inplaceupdate reads the barrier env through appspub.ContainerLaunchPriority).
//
// It imports apis/, controllers/setup and controllers/internal/podadmission (for the Step type);
// it must not import the manager or other kinds' packages (`controllers/...` other than
// `controllers/setup` and `controllers/internal/...`).
package launchpriority
