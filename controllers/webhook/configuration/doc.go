// Package configuration owns the admission webhooks kruise-manager serves, as a Go table
// (table.go) that is the source of truth: Desired builds both webhook configurations from it
// for tests and local runs, ChartFile renders it into charts/kruise/files/webhooks.yaml for the
// chart (gen/ is the `make manifests` step), and Patcher keeps caBundle (and, with a webhook
// host, the URL) current in kruise-mutating-webhook-configuration,
// kruise-validating-webhook-configuration and in the conversion of our CRDs whose strategy is
// Webhook. It drops from the configurations any webhook whose path this manager has no
// handler for (a gate turned it off), so that nobody's requests fail on it, and writes every
// webhook's rules as the table gives them under the manager's gates: an operation named in a
// rule's OperationGates (pod UPDATE of vpod.kb.io, under PodUnavailableBudgetUpdateGate; DELETE
// of the CloneSet, Advanced StatefulSet and UnitedDeployment webhooks, under
// ResourcesDeletionProtection) is
// in the rules only while its gate is on, since no check answers it otherwise. It must not import
// kind packages or the manager (`controllers/...` other than `controllers/setup` and
// `controllers/internal/...`).
package configuration
