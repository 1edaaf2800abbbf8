// Package cri finds the node's CRI runtime under the host run dir and dials its image and
// runtime services over gRPC. It owns the probe order, the runtime-info metric, the listing of a
// pod's containers by the kubelet's labels, and the one way the daemon stops a container
// (Stopper: preStop hook, then StopContainer with the rest of the grace period), which the
// recreate and containers-meta controllers share. It must not import the Kubernetes API clients
// (`k8s.io/client-go/...`, `sigs.k8s.io/controller-runtime/...`) or the other daemon packages
// (`daemon/...`).
package cri
