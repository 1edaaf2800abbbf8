// Package podprobe is kruise-daemon's side of PodProbeMarker: it watches its node's
// NodePodProbe, runs one worker per pod probe (exec through CRI ExecSync in the container, TCP
// and HTTP against the pod IP, with initialDelaySeconds, periodSeconds, timeoutSeconds and the
// success and failure thresholds), and writes the results into status.podProbeStatuses. Results
// that change in a burst are written together: a single writer takes the latest result of every
// probe each time it runs.
//
// It must not import the manager's controllers (`controllers/...`); it talks to the runtime
// through daemon/cri.
package podprobe
