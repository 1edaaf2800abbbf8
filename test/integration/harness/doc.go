// Package harness runs kruise-manager in-process for the integration suites: manager options
// for a manager reached by URL on loopback, start and stop, readiness, and the webhook
// configurations the chart would create. It imports the manager and the webhook table, so it
// lives here and not in test/framework, which must not import the add-on's own packages.
package harness
