// Package pod holds the pod mutating admission handler ("/mutate-pod"). Today it injects the
// readiness gates the add-on's workloads rely on into pods being created; later pod
// mutations (SidecarSet injection, WorkloadSpread, ...) join it as further steps.
//
// It imports apis/, controllers/setup and features/; it must not import the manager, other
// webhook packages or any controller.
package pod
