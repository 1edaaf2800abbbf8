// Package sidecarterminator owns the SidecarTerminator (gate SidecarTerminator, which needs
// KruiseDaemon): once every main container of a pod with restartPolicy Never has exited (with
// OnFailure: has succeeded), the pod's sidecars — app containers whose env sets
// KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true — are stopped so that the pod, and the Job that
// owns it, can finish. On a normal node it creates one ContainerRecreateRequest per pod,
// sidecar-termination-<pod UID>, owned by the pod, with forceRecreate and failurePolicy Ignore:
// kruise-daemon stops the containers through CRI and the kubelet, whose restart policy does not
// restart an exited container, reports them exited. On a virtual-kubelet node (Node label
// type=virtual-kubelet), where no kruise-daemon runs, a sidecar whose env
// KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE names an image gets that image by an in-place
// update instead. A sidecar that also sets KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE=true is
// stopped only after the pod's phase has been set (Succeeded when the main containers
// succeeded, else Failed) with the SidecarTerminated condition, so its exit code does not fail
// the pod. Native sidecars (init containers with restartPolicy Always) are not its concern: the
// kubelet stops them itself. What to do is the pure decide (sidecarterminator_plan.go).
//
// It imports apis/, controllers/setup and controllers/internal/kit; it must not import the
// manager, webhooks or other controllers (`controllers/...` other than `controllers/setup` and
// `controllers/internal/...`).
package sidecarterminator
