// Package sidecarterminator proves the SidecarTerminator's decisions on a real apiserver: which
// pods and which of their containers it stops, the ContainerRecreateRequest it creates (through
// the real ContainerRecreateRequest webhook), the stop image on a virtual-kubelet node, the
// phase it writes before stopping a sidecar whose exit code is ignored, and nothing while a
// main container runs. The tests play the kubelet by writing the pods' status on nodes no
// simulator owns; kruise-daemon's stop itself is proven by the e2e step on a real kubelet.
package sidecarterminator
