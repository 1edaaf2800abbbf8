// Package webhook owns kruise-manager's admission server wiring: the path forms each handler
// is served under (paths.go), the latency histogram around every handler (metrics.go), the
// server that waits for its certificates before it listens, the /convert endpoint, and the
// readiness check (server.go). Sub-packages: certs/ (the serving certificates),
// configuration/ (the table of webhooks and the caBundle patcher), admit/ (the admission kit
// every kind's webhook package is built on), fieldrule/ (the field rules the kinds' validations
// share) and webhooktest/ (what their tests share). It must not import kind packages (`controllers/...`
// other than `controllers/setup`, `controllers/internal/...`, `controllers/webhook/certs` and
// `controllers/webhook/configuration`): handlers arrive as setup.Webhooks maps from the manager.
//
// # Metrics
//
// Served on --metrics-addr at /metrics, from controller-runtime's registry:
//
//   - kruise_webhook_duration_seconds{path,allowed}: histogram of the time an admission
//     handler took, by the canonical 1.8 path it is registered under and whether it allowed
//     the request ("true"/"false"). Its buckets run from 0.25 ms (0.25, 0.5, 1, 2, 3, 5 ms, ...)
//     to 10 s, fine enough to read a pod admission p99 against a 2 ms target; it times the
//     handler, not the request's decoding.
//   - controller_runtime_webhook_latency_seconds{webhook}, controller_runtime_webhook_requests_total{webhook,code},
//     controller_runtime_webhook_requests_in_flight{webhook}: controller-runtime's per served path.
//   - controller_runtime_reconcile_total{controller,result}, controller_runtime_reconcile_errors_total{controller},
//     controller_runtime_reconcile_time_seconds{controller}, workqueue_* {name}: per controller.
//   - leader_election_master_status{name}: 1 on the replica that holds Lease kruise-manager.
package webhook
