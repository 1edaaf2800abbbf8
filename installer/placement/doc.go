// Package placement owns where the manager and the daemon run: the zone mode across
// topology.kubernetes.io/zone (preferred, even, required), node affinity (chosen nodes, node
// pools or label expressions), tolerations, and keeping the daemon off chosen nodes. It turns
// those choices into chart values and typed Kubernetes objects that preflight checks against
// the cluster's nodes. It must not import Helm (`helm.sh/...`) or any cluster client
// (`k8s.io/client-go/...`, `sigs.k8s.io/controller-runtime/...`).
package placement
