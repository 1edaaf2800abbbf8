// Package pod holds the pod admission handlers. "/mutate-pod" decodes a pod being
// created once and runs a list of steps on it: first the readiness gates the add-on's workloads
// rely on, then the steps other kinds contribute (SidecarSet injection, WorkloadSpread, ...)
// through podadmission.Step and StepFactory, wired in by the manager; the EnhancedLivenessProbe
// step, which belongs to no kind, is this package's own (enhancedliveness.go). It answers with a
// JSON patch written from what the steps changed (podadmission.Patch), not by encoding the pod
// again and diffing it with the request. "/validate-pod"
// decodes a pod update, deletion or eviction once into a podadmission.Attempt and runs the
// Checks other kinds contribute (WorkloadSpread, PodUnavailableBudget) through
// podadmission.Check and CheckFactory.
//
// It imports apis/, controllers/setup, controllers/internal/podadmission (the contract the
// kinds implement), controllers/internal/podcondition (the readiness gates) and features/; it
// must not import the manager, other webhook packages or any controller (`controllers/...`
// other than `controllers/setup`, `controllers/internal/podadmission`,
// `controllers/internal/podcondition`, the admission kit `controllers/webhook/admit` and the
// deletion guard the kit holds, `controllers/webhook/deletionprotection`).
package pod
