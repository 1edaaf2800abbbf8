// Package uninstallgate owns the uninstall gate: how many objects of each user-created kind of
// the add-on remain in a cluster, and how to say so. The installer runs it in Go before it calls
// Helm's uninstall; kruise-manager's `uninstall-check` subcommand runs it in-cluster for the
// chart's pre-delete hook. Which kinds count comes from apis/kinds.
//
// It is shared by both binaries, so it must not import Helm (`helm.sh/...`), `controllers/...`,
// `daemon/...` or `installer/...`; it imports apis/kinds, apimachinery and client-go only.
package uninstallgate
