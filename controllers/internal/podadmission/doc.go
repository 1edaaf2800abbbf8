// Package podadmission is the contract by which kinds join the pod admission webhooks: a Step
// mutates a pod being created (/mutate-pod), a Check judges an Attempt to update, delete or
// evict one (/validate-pod). A kind's package (SidecarSet injection, WorkloadSpread,
// PodUnavailableBudget, PersistentPodState, container launch priority) implements them and
// exports a StepFactory or CheckFactory; controllers/webhook/pod runs them in the order the
// manager wires them. Kinds import this package, and not the webhook packages. It also holds
// what the steps share to keep an admission cheap: Patch writes /mutate-pod's answer from what
// changed, Selectors keeps the label selectors of cached objects parsed between pods, and
// Snapshot holds a kind's cached objects by key from the informer's events, so that a step
// reads them without a List that copies each one per pod.
//
// It is a leaf: it imports Kubernetes' core API, client-go's informer events, controller-runtime
// and controllers/setup, and must not import a kind's package, the manager or any webhook
// package (`controllers/...` other than `controllers/setup`).
package podadmission
