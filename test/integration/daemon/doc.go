// Package daemon proves kruise-daemon against a real containerd (started and stopped by
// scripts/containerd/start.sh and stop.sh), loopback OCI registries and the framework's
// apiserver, with the daemon run in-process as the chart's kruise-daemon ServiceAccount, bound to
// the roles charts/kruise renders: every call below is made with a real installation's rights.
//
// Proven on the real containerd 1.6 through CRI v1: detection (Version and ListImages answer),
// PullImage into the runtime (ListImages shows the tag), pulls with basic-auth credentials and
// their refusal without them (the runtime's 401 message reaches NodeImage status), a missing
// tag failing after 1+backoffLimit attempts, ListContainers/ContainerStatus by the kubelet's
// labels, ExecSync for an exec preStop hook, StopContainer with the grace period, and
// runtime-containers-meta from the runtime's containers (with each container's env-from-metadata
// hash read from the env containerd started it with), the restart of a container whose label-read
// env an in-place update changed (stopped once, started again by the test's kubelet with the new
// value, which its log shows), and, with the manager's CRR controller,
// a CRR's unreadyGracePeriodSeconds holding the pod not ready before the real container stops,
// the PullImageSucceed and PullImageFailed events of finished pulls, pull secrets read from the
// daemon's cache (and a changed secret used by later pulls), and /readyz failing while /healthz
// passes until the daemon's cache can sync. The kubelet is played by the test
// (sandbox and containers created through CRI, Attempt+1 on restart, pod status written).
//
// Proven only on a fake CRI server: a cri-dockerd socket named and detected as such, the
// --socket-file override on a non-default name, and the two simulated nodes of the ImagePullJob
// end-to-end case. The HTTP preStop hook runs against a test HTTP server, not a container.
package daemon
