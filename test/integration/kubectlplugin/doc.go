// Package kubectlplugin proves kubectl-kruise against the real kube-apiserver: each command on a
// CloneSet, an Advanced StatefulSet and an Advanced DaemonSet run by the real manager on
// simulated nodes, with its output compared against what kubectl itself prints for a Deployment
// that kube-controller-manager runs next to them.
package kubectlplugin
