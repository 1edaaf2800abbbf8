// Command images builds the add-on's container images without a container engine: static
// binaries (CGO_ENABLED=0) on an empty base with CA certificates and /etc/passwd, written as an
// OCI layout and, with -registry, pushed to a registry over plain HTTP (a loopback one).
//
// Images: kruise-addon/kruise-manager (user 65532), kruise-addon/kruise-daemon (root, as the
// chart runs it), and for the end-to-end cluster e2e/pause (the kubelet sandbox) and
// e2e/sample:v1, v2 and v3 (the same tiny binary with different version files, so different
// digests). -platforms linux/amd64,linux/arm64 builds each image for every architecture listed
// and writes an image index per image (one architecture, the default being the machine's, writes
// a plain image). It imports only go-containerregistry and the standard library.
package main
