// Package containermeta writes apps.kruise.io/runtime-containers-meta on the pods of its node:
// per container, the runtime's container ID, restart count and the kubelet's hash, so that the
// manager can tell when an in-place update has been carried out. It writes through the pods/status
// subresource, the only pod write the daemon's role allows.
//
// With the InPlaceUpdateEnvFromMetadata gate it also records, once per container ID, the hash of
// the env the container reads from pod labels and annotations (hashes.extractedEnvFromMetadataHash,
// from the env the runtime started it with), and while an in-place update with
// updateEnvFromMetadata is in progress it stops, through cri.Stopper, each running container
// whose recorded hash differs from the one the pod's metadata now gives, after a settle period
// (DefaultSettle) that lets the kubelet, which watches the pod on its own, see the new metadata
// first; the kubelet starts it again with the new env, and the manager completes the update once the new container's hash
// is recorded.
//
// It must not import `controllers/...` or daemon packages (`daemon/...`) other than `daemon/cri`
// (the env hash comes from apis/apps/pub/envhash).
package containermeta
