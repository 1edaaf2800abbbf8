// Package imagepuller pulls the tags of its node's NodeImage through the CRI image service with
// a pool of workers, resolves pull secrets into CRI auth, applies each tag's timeout, backoff
// limit and deadline, and writes per-tag phase and progress into NodeImage status. Status
// writes are coalesced, start from the cached NodeImage (the apiserver is read only after a
// conflict) and are sent only when the status changed; times are stamped at the second, the
// precision the apiserver keeps, so that a status read back equals the one written. While tags
// still wait or pull, progress is written at most once per StatusInterval (1 s; 1.8 writes it
// every 3 to 5 s); the write that leaves every tag Succeeded or Failed goes out at once. A
// failed pull is a Failed tag, never a crash. A finished pull leaves 1.8's events, from source
// kruise-daemon-imagepuller on the node: PullImageSucceed on the NodeImage, or PullImageFailed on
// the NodeImage and on each object that asked for the tag (its ImagePullJobs). Pull secrets are
// read from the daemon's cache of the config namespace, and from the apiserver only when the
// cache does not hold one yet. It must not import `controllers/...` or daemon packages
// (`daemon/...`) other than `daemon/cri`.
package imagepuller
