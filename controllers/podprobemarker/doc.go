// Package podprobemarker reconciles PodProbeMarkers: it writes the probes of each marker into the
// NodePodProbe of every node that runs a matching pod, keeps status.matchedPods, and takes the
// marker's probes out of the NodePodProbes again when the marker is deleted (finalizer
// kruise.io/node-pod-probe-cleanup). Turning probe results into pod labels, annotations and
// conditions belongs to controllers/nodepodprobe; running the probes belongs to kruise-daemon.
//
// It must not import other controllers or the webhook packages (`controllers/...` other than
// `controllers/setup` and `controllers/internal/...`).
package podprobemarker
