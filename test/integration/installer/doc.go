// Package installer proves the kruise-addon installer against a real control plane: etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler, with simulated nodes in three zones
// so that Helm's --wait waits for real Deployments and DaemonSets.
package installer
