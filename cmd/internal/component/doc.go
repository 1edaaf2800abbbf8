// Package component is the one start-up sequence of the add-on's component binaries,
// kruise-manager and kruise-daemon: flags, validation, the logger, the kubeconfig, then the
// component's own Run, with one set of exit codes (0 done or help, 1 failed, 2 usage).
//
// It must not import the installer library (`installer/...`) or Helm (`helm.sh/...`), nor a
// component's own packages (`controllers/...`, `daemon/...`): each main hands it functions.
package component
