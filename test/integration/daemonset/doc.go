// Package daemonset proves the Advanced DaemonSet controller and webhooks against a real
// kube-apiserver and a real kube-scheduler, with simulated nodes acting as kubelets. Test names
// follow the upstream end-to-end titles for the kind; every test owns its namespace and removes
// its DaemonSet and pods when it ends, so that the shared nodes are clean for the next one.
package daemonset
