// Package installer is the kruise-addon library: spec presets, placement, cluster compatibility,
// preflight, Helm actions, the uninstall gate, the HTTP API and air-gapped bundles; cli/ holds the
// thin cobra commands. It must not import controllers/ or daemon/.
package installer
