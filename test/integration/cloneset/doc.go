// Package cloneset proves the CloneSet controller and its webhooks on a real kube-apiserver: the
// manager runs in-process with its webhooks registered in the apiserver by URL, and the node
// simulator plays the kubelet, in-place image restarts included.
package cloneset
