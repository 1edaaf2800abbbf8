// Package daemon is the root of kruise-daemon, the node-side half of the add-on: it talks CRI
// to the node's runtime (cri/), pulls images for NodeImage (imagepuller/), recreates containers
// for ContainerRecreateRequest (containerrecreate/) and reports runtime container metadata on
// pods, restarting containers whose env from pod metadata an in-place update changed
// (containermeta/, with the hash in apis/apps/pub/envhash), and runs the probes of its node's NodePodProbe
// (podprobe/). It serves /metrics, /healthz (live: the runtime answers) and /readyz (ready: the
// runtime answers and every kind the daemon caches has been listed). It must not import
// `controllers/...`.
package daemon
