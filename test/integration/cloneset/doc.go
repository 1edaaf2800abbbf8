// Package cloneset proves the CloneSet controller and its webhooks on a real kube-apiserver: the
// manager runs in-process with its webhooks registered in the apiserver by URL, and the node
// simulator plays the kubelet, in-place image restarts included. The huge-replicas tests give a
// CloneSet 2147483647 replicas and measure the process's heap and the pods created after a scale
// to 0 or a deletion (framework.HugeScale); the deletion test runs kube-controller-manager's
// garbage collector.
package cloneset
