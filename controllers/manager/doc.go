// Package manager owns kruise-manager's process: its options and flags (options.go), the list
// of controllers and webhook handler sets it runs (components.go and webhooks.go), and Run, which wires them
// into a controller-runtime manager with leader election on Lease kruise-manager, the webhook
// server with its certificates on every replica, the caBundle patcher and the controllers on
// the leader only (a standby starts their watches, so that it takes over with full caches),
// metrics, and /healthz and /readyz. cmd/kruise-manager is its only caller
// besides the tests. It imports kind packages only in components.go and webhooks.go.
package manager
