// Package podprobemarker reconciles PodProbeMarkers: it writes the probes of each marker into the
// NodePodProbe of every node that runs a matching pod, keeps status.matchedPods, and takes the
// marker's probes out of the NodePodProbes again when the marker is deleted (finalizer
// kruise.io/node-pod-probe-cleanup). Turning probe results into pod labels, annotations and
// conditions belongs to controllers/nodepodprobe; running the probes belongs to kruise-daemon.
// Pods on virtual-kubelet nodes get no NodePodProbe entry; with EnablePodProbeMarkerOnServerless
// this package's /mutate-pod step (ServerlessStep) writes their probes into the
// kruise.io/podprobe annotation and the controller marks them from the conditions their
// platform writes (serverless.go).
//
// It must not import other controllers or the webhook packages (`controllers/...` other than
// `controllers/setup` and `controllers/internal/...`).
package podprobemarker
