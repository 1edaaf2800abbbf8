// Package e2e is the end-to-end suite: the add-on installed by kruise-addon onto a real
// single-node cluster (scripts/e2e-cluster: containerd, a real kubelet, a loopback registry) and
// driven the way a user drives it, with kubectl and the installer's CLI.
//
// The tests carry the build tag e2e, so `go test ./...` never runs them; `make e2e` brings the
// cluster up, builds the images into an air-gap bundle and mirrors it into the cluster's loopback
// registry (its only one), runs `go test -tags e2e ./test/e2e/` with E2E_ENV naming the cluster's
// env file (scripts/e2e-cluster/up.sh writes it), KRUISE_ADDON naming the installer binary and
// E2E_BUNDLE the bundle to install from, and tears the cluster down.
//
// The files under the build tags e2e and multinode hold TestMultiNode, the scenarios about several
// nodes and zones; `make e2e-multinode` runs it (-tags e2e,multinode -run TestMultiNode) on the
// three real nodes, one per zone, that up.sh starts with E2E_NODES=3.
//
// It imports the add-on's API types, client-go and go-containerregistry; it must not import the
// manager, controllers or installer packages (`controllers/...`, `installer/...`): those are
// exercised only through their binaries.
package e2e
