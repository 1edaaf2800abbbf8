// Package sidecarset proves SidecarSet against the real apiserver and the node simulator:
// injection by the /mutate-pod step, the SidecarSet webhooks, and in-place sidecar updates by
// the controller. Tests are named after the 1.8 e2e titles they cover.
package sidecarset
