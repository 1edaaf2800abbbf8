// Package containermeta writes apps.kruise.io/runtime-containers-meta on the pods of its node:
// per container, the runtime's container ID, restart count and the kubelet's hash, so that the
// manager can tell when an in-place update has been carried out. It writes through the pods/status
// subresource, the only pod write the daemon's role allows. It must not import
// controllers/ or daemon packages other than daemon/cri.
package containermeta
