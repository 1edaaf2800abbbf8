// Package podprobemarker serves the PodProbeMarker validating webhook at 1.8's unversioned path
// /validate-apps-kruise-io-podprobemarker. It refuses markers while PodProbeMarkerGate or
// KruiseDaemon is off, and invalid ones with every field error.
//
// It must not import the controllers (`controllers/...` other than `controllers/setup`).
package podprobemarker
