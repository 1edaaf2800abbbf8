// Package nodepodprobe reconciles NodePodProbes, one per node and named after it: it creates
// the NodePodProbe of each Ready node and deletes the one of a gone node, drops the entries of
// pods that are gone, and turns the probe results kruise-daemon writes into status into the
// pods' labels, annotations (the probe's markerPolicy for the state) and conditions (the probe's
// podConditionType). Writing the probes into the spec belongs to controllers/podprobemarker.
//
// It must not import other controllers or the webhook packages (`controllers/...` other than
// `controllers/setup` and `controllers/internal/...`).
package nodepodprobe
