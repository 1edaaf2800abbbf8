// Package cli holds the kruise-addon cobra commands. Each command only moves its flags into a
// local options struct and calls the installer library with cmd.Context(); no decision is made
// here. It must not import Helm's action package directly.
//
// Exit codes (also in the README):
//
//	0  success (also: nothing to do, e.g. unlock of a healthy release)
//	1  error: the cluster, Helm or the network failed
//	2  bad input: unknown flag value, invalid spec or placement, values that fail the chart's
//	   values.schema.json or name a system namespace as daemon.configNamespace; nothing was applied
//	3  refused: preflight, the uninstall gate (custom resources remain), an invalid upgrade path,
//	   or a release stuck pending (run `kruise-addon unlock`); nothing was applied
//	4  upgrade failed and was rolled back; the release is deployed at the previous configuration
//
// Every command takes --output text|json; with json, errors are printed as
// {"error": ..., "exitCode": ..., "refused": {...}} on stdout.
package cli
