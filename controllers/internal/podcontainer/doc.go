// Package podcontainer finds a pod's container, or its status, by name: the look-up every kind
// that works on one container of a pod (SidecarSet hot upgrade, ContainerRecreateRequest) needs.
//
// It imports only the core API types and must not import `apis/...`, `controllers/...` or
// `daemon/...`.
package podcontainer
