// Package gate owns the uninstall gate: which user-created kinds the add-on serves, how many
// objects of each remain in a cluster, and how to say so. The installer runs it in Go before it
// calls Helm's uninstall; the manager's `uninstall-check` subcommand runs it in-cluster for the
// chart's pre-delete hook.
//
// It must not import Helm, controllers/ or the rest of installer/, so that the manager binary can
// link it cheaply.
package gate
