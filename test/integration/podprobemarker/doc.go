// Package podprobemarker proves the manager side of PodProbeMarker on a real apiserver with
// simulated nodes: the NodePodProbe of each node written from a marker and its pods, probe
// results (the tests play kruise-daemon by writing NodePodProbe status) turned into pod labels,
// annotations and conditions, cleanup when a pod or the marker goes, the webhook's field
// errors, and pods on a virtual-kubelet node left unmarked while EnablePodProbeMarkerOnServerless
// is off (test/integration/probegates runs it on).
package podprobemarker
