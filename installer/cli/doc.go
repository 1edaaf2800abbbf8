// Package cli holds the kruise-addon cobra commands. Each command only moves its flags into a
// local options struct and calls the installer library with cmd.Context(); no decision is made
// here. It must not import Helm's action package (`helm.sh/helm/v3/pkg/action`) directly.
//
// Exit codes (also in the README):
//
//	0  success (also: nothing to do, e.g. unlock of a healthy release)
//	1  error: the cluster, a registry, Helm or the network failed; a request got no answer within
//	   --request-timeout; the command ran past --timeout; or it was cancelled by SIGINT/SIGTERM
//	2  bad input: unknown flag value, an invalid --release or --namespace name, invalid spec or
//	   placement, values that fail the chart's values.schema.json or name a system namespace or
//	   the install namespace as daemon.configNamespace, a chart that does not render with the values (rendered
//	   client-side for the cluster's version before anything is applied; with no image registry,
//	   neither --bundle nor imageRegistry, the message names imageRegistry), or a --bundle that
//	   cannot be read, does not verify (bundle verify's checks; with --bundle-key or --key, an
//	   unsigned or wrongly signed bundle) or comes without --registry; nothing was applied
//	3  refused: preflight, the uninstall gate (custom resources remain), an invalid upgrade path,
//	   a release stuck pending (run `kruise-addon unlock`), another release of the add-on in the
//	   cluster or another command holding the cluster's lock (named, with its state), or a mirror
//	   registry that lacks an image of the --bundle (each one named), or values that run an image
//	   the --bundle lacks (server.enabled from a bundle created without --server; named); nothing
//	   was applied
//	4  install or upgrade failed (Helm failed, or the add-on was not ready within --timeout) and
//	   was undone: an install rolled back to nothing (release uninstalled, CRDs and custom
//	   resources kept), an upgrade rolled back to the last deployed revision
//
// Every command takes --output text|json. With json, stdout holds exactly one JSON document:
// the command's result, or on failure {"error": ..., "exitCode": ..., "refused": {...},
// "rolledBack": {...}, "result": {...}}, where refused, rolledBack and result (what the command
// found before it failed, such as preflight's report) appear only when they apply.
//
// `serve` runs the HTTP API of installer/server over the same library; its errors carry the same
// exit-code classes, as exitCode in the JSON error body.
//
// Every request to the cluster or to a mirror registry waits at most --request-timeout (default
// 30s; a registry request, a blob's upload included, must finish within it); --timeout bounds
// install, upgrade and uninstall as a whole. The context passed to Run is the command's: main
// cancels it on the first SIGINT or SIGTERM, and a second signal ends the process at once.
package cli
