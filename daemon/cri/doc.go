// Package cri finds the node's CRI runtime under the host run dir and dials its image and
// runtime services over gRPC. It owns the probe order and the runtime-info metric; it must not
// import the Kubernetes API clients or the other daemon packages.
package cri
