// Command kruise-manager runs the add-on's controllers and webhook server;
// `kruise-manager uninstall-check` is the pre-delete gate run in-cluster.
//
// It must not import the installer library (`installer/...`) or Helm (`helm.sh/...`): the
// uninstall-check subcommand uses the shared uninstallgate package instead.
package main
