// Package framework runs what the suites under test/ need from a cluster: a real etcd and
// kube-apiserver, and simulated nodes that schedule and run pods like kube-scheduler and a
// kubelet would. It must not import the add-on's APIs or controllers (`apis/...`,
// `controllers/...`, nor `test/framework/builder/kinds`, which builds the add-on's kinds); callers
// add their kinds through WithSchemeAdder.
//
// # Control plane
//
// Start runs etcd and kube-apiserver from $KUBEBUILDER_ASSETS (`make testbin` builds them and
// prints the folder) on loopback ports, with TLS from a CA of its own and an admin client in
// system:masters, installs every CRD in CRDDir() and waits until each is Established and
// served. Env carries a rest.Config, a controller-runtime client, a clientset and a kubeconfig
// file; Env.Kubectl runs the matching kubectl. Grant gives a user RBAC rules and waits until the
// authorizer sees them; Env.ClientAs acts as that user.
//
// The processes cannot outlive the test binary: on Linux each is started with a parent-death
// signal (SIGKILL), from an OS thread that lives exactly as long as the child, so they die
// with the binary even when it panics, times out or is killed. Stop ends them and removes the
// work dir; a later Start removes work dirs whose owner died.
//
// # Node simulator
//
// StartNodeSimulator owns the nodes it creates (AddNodes, typically from builder.Node), marked
// with the annotation AnnotationSimulatedNode. For them it plays:
//
//   - kube-scheduler (WithoutScheduler turns it off): an unbound pod with the default
//     scheduler name is bound, through the Binding subresource, to the Ready, schedulable
//     simulated node that matches its nodeSelector and required node affinity, tolerates the
//     node's NoSchedule and NoExecute taints, and has the fewest pods. A pod that fits nowhere
//     gets PodScheduled=False/Unschedulable and is retried when a simulated node changes.
//     Like kube-scheduler it decides one pod at a time and writes the bindings side by side,
//     with as many workers as the kubelet (WithWorkers).
//   - the kubelet: a pod bound to a simulated node goes Pending (hostIP, a podIP unique among
//     the simulator's pods, startTime, containers waiting in ContainerCreating), then after
//     the start delay Running (containers running with an imageID of
//     <image without tag>@sha256:<sha256 of the image reference>, a containerID of
//     <runtime>://<hex>, started, restartCount), then ready after the ready delay. Ready
//     follows the kubelet rule: True only when every container is ready and every readiness
//     gate's condition is True, re-evaluated whenever the pod changes.
//   - in-place image changes: when a running container's spec image differs from its status
//     image, the container stops (state terminated, not ready) and after the image change
//     delay runs again with the new image and imageID, a new containerID and restartCount+1;
//     the pod's other containers are untouched.
//   - deletion: a deleted pod stays for its grace period (or WithTerminationDelay), then
//     reports a terminal status and is deleted with grace period 0, finalizers permitting.
//
// Pods on nodes the simulator does not own are never touched. Timestamps and delays follow
// the clock of WithClock, so a test can step a fake clock through every state. A node whose
// Ready condition is False (SetNodeReady) gets no pods, and its pods freeze.
//
// # Per-pod knobs
//
// Annotations on a pod change what the simulated kubelet does with it; they are read on
// every sync:
//
//   - sim.kruise-addon.io/not-ready: "true", or a comma-separated list of container names,
//     keeps those containers running but not ready (a failing readiness probe);
//   - sim.kruise-addon.io/phase: "Succeeded" or "Failed" ends the running pod in that phase,
//     every container exiting 0 or 1;
//   - sim.kruise-addon.io/start-delay, ready-delay, image-change-delay: Go durations that
//     override the simulator's delays for this pod.
//
// Stop stops every goroutine the simulator started; nodes and pods stay.
//
// # Test kit
//
// The suites wait and create through one kit. Eventually polls a condition that returns nil
// when it holds (Want turns a bool and a reason into one) every Poll until a named timeout:
// Short for a read or a watch event, Medium for one reaction of a controller, webhook or the
// simulator, Long for a component starting or taking over; a suite keeps a timeout of its own
// only for what takes longer than Long. Consistently checks a condition for a whole duration;
// PollUntil is Eventually for code without a testing.TB. NewNamespace creates a generated
// namespace deleted when the test ends; Create and CreateForTest create an object, the latter
// deleting it when the test ends. Get reads an object and Change updates one through a function,
// again on every conflict; MergePatch and Delete patch and delete one, failing the test when
// refused. WaitFor waits until an object passes a check, WaitForPods until an app's live pods
// do, WaitPodsReady until named pods are Ready, WaitGone until an object no longer exists and
// WaitForEvent until an event of a namespace matches. LivePods lists an app's pods that are not
// terminating, and PodCondition, PodReady, ContainerStatus and PodUIDs read pods. Sample calls
// a look function over and over while a rollout runs, for the worst it shows. FreePorts finds
// loopback ports.
//
// Env.RunHugeScale is the scenario of the huge-replicas tests (HugeScale): a workload of
// HugeReplicas creates its first pods while this process's live heap, which holds the
// in-process manager, is measured, and WatchHeap ends the test binary the moment the heap
// passes the chart's memory limit for the manager, since nothing in a test can stop an
// allocation in the manager; once the workload is scaled to 0 or deleted, a PodTally counts the
// pods created after it. test/integration/harness holds what needs the add-on's own
// packages: Main, the TestMain the integration suites share, and WriteServingCert.
package framework
