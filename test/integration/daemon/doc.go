// Package daemon proves kruise-daemon against a real containerd (started by
// scripts/containerd/start.sh), a loopback OCI registry and the framework's apiserver: runtime
// detection, image pulls into NodeImage status, container recreate and runtime-containers-meta.
package daemon
