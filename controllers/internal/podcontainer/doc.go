// Package podcontainer finds a pod's container, its status or its env value, by name: the look-up every kind
// that works on one container of a pod (SidecarSet hot upgrade, ContainerRecreateRequest,
// SidecarTerminator) needs.
//
// It imports only the core API types and must not import `apis/...`, `controllers/...` or
// `daemon/...`.
package podcontainer
