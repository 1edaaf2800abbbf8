// Package imagepull proves the NodeImage, ImagePullJob and ImageListPullJob controllers on a
// real kube-apiserver: the manager runs in-process with those controllers, the node simulator
// provides the Nodes, and the tests play kruise-daemon by writing NodeImage status for the
// tags the manager writes into NodeImage specs.
package imagepull
