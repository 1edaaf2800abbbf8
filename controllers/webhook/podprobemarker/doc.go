// Package podprobemarker serves the PodProbeMarker validating webhook at 1.8's unversioned path
// /validate-apps-kruise-io-podprobemarker. It refuses markers while PodProbeMarkerGate or
// KruiseDaemon is off, and invalid ones with every field error.
//
// The admission kit (controllers/webhook/admit) decodes and answers. It must not import the
// controllers (`controllers/...` other than `controllers/setup`, the kit
// `controllers/webhook/admit` and the deletion guard it holds,
// `controllers/webhook/deletionprotection`).
package podprobemarker
