// Package facts reads, once, what the installer's decisions depend on: the server version, the
// nodes (zones, pools, taints, runtimes, allocatable cpu and memory and what their pods request), Helm releases of the kruise chart, the add-on's CRDs
// with their Helm owners, any kruise-controller-manager already running, and whether the
// namespaces the chart would create exist already, and who owns them. The result is a
// plain value; preflight decides from it without a cluster. It must not import preflight
// (`installer/preflight`) or the Helm action package (`helm.sh/helm/v3/pkg/action`).
package facts
