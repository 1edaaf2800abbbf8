// Package harness runs kruise-manager in-process for the integration suites: manager options
// for a manager reached by URL on loopback, start and stop, readiness, and the webhook
// configurations the chart would create.
//
// Main is the TestMain the suites share. A package declares a Suite (its nodes and their
// timing, the kube controllers it needs, and the controllers, webhooks, gates and workers of its
// manager) and Main starts the control plane with the add-on's kinds, the controller-runtime log
// in a file kept when setup or a test fails, kruise-system and other namespaces, the node
// simulator, kube-scheduler and kube-controller-manager, and one in-process manager with both
// webhook configurations and their CA, then the suite's own setup. Restart replaces a suite's
// manager by one of other settings, with the webhook configurations registered afresh.
// WriteServingCert gives a webhook server a certificate from the manager's own certificate code.
// LeaseHolder and WaitNewLeader read and wait on the managers' leader-election Lease.
// PreDownload checks the ImagePullJob a workload's in-place image change creates, and the
// revisions that pre-download nothing.
//
// It imports the manager and the webhook table, so it lives here and not in test/framework,
// which keeps clear of the add-on's own packages.
package harness
