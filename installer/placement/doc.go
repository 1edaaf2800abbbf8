// Package placement owns where the manager and the daemon run: the zone mode across
// topology.kubernetes.io/zone (preferred, even, required), node affinity (chosen nodes, node
// pools or label expressions), tolerations, and keeping the daemon off chosen nodes. It turns
// those choices into chart values and typed Kubernetes objects that preflight checks against
// the cluster's nodes. It must not import Helm or any cluster client.
package placement
