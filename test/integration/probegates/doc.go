// Package probegates proves, on a real apiserver with simulated nodes, what the alpha probe
// gates EnhancedLivenessProbe and EnablePodProbeMarkerOnServerless turn on: the pod webhook
// moving the liveness probes of an annotated pod into apps.kruise.io/container-probe-context,
// the pod webhook writing a PodProbeMarker's probes into kruise.io/podprobe, and the
// PodProbeMarker controller marking a pod on a virtual-kubelet node from the conditions its
// platform writes (the tests play the platform). The behaviour with the gates off, their 1.8
// default, is proven in test/integration/podprobemarker and the packages' unit tests.
package probegates
