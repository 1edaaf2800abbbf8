// Package installer is the kruise-addon library: it ties spec presets, placement, cluster facts,
// preflight and the Helm actions together into install, upgrade, uninstall, unlock, status,
// render and versions. Subpackages own each concern (spec, placement, facts, preflight, release,
// chartsource); the uninstall gate it runs is the shared uninstallgate package, and which CRDs
// are the add-on's comes from apis/kinds. cli/ holds the thin cobra commands over this package.
// It must not import controllers/ or daemon/.
package installer
