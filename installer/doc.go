// Package installer is the kruise-addon library: it ties spec presets, placement, cluster facts,
// preflight and the Helm actions together into install, upgrade, uninstall, unlock, status,
// render and versions. Subpackages own each concern (spec, placement, facts, preflight, release
// for the Helm side, crds for the add-on's CRDs, chartsource, and bundle for air-gapped installs:
// Options.Bundle and Options.Registry install a bundle's chart with every image from a mirror by
// digest, after verifying the bundle (and its signature with Options.BundleKey), refusing values
// that run an image it lacks, and checking the mirror holds each one); the uninstall gate it runs is the shared
// uninstallgate package, and which CRDs are the add-on's comes from apis/kinds. cli/ holds the
// thin cobra commands over this package, server/ the HTTP API (`kruise-addon serve`) over the
// same calls: both turn a user's choices into Options through one translator (Choices.Options),
// and errors carry one exit-code class for both (ExitClass).
//
// Install and upgrade are one sequence, applySteps in apply.go: check the bundle's images, take
// the cluster's lock, read the release and decide the Helm action from its state, (upgrade)
// check the upgrade path and reuse the previous values, read the cluster's facts, preflight,
// render for the cluster, label the namespace, adopt the CRDs, (upgrade) apply the CRDs, run the
// Helm action and wait. What tells the two apart is data (helmActions): which steps are the
// action's own, from which step on a failure is undone, and what the undo goes back to. The
// root's files are the public calls (apply, uninstall, unlock, status, render, versions) over
// the preparation (prepare, values, airgap, preflight, lock, namespace), the release at hand
// (release.go, result.go), readiness and progress, and the undo (recover.go, sweep.go).
// It must not import `controllers/...` or `daemon/...`.
//
// The add-on runs once per cluster: install, upgrade, uninstall and unlock hold the cluster's
// lock, a Lease renewed while they run (lock.go), and install and upgrade refuse while another
// release of the add-on exists; an uninstall deletes only objects that carry its own release's
// ownership (release.NewUninstall). An uninstall the gate refuses while the manager has no ready
// endpoint lets the webhooks that would refuse the printed cleanup fail open, and lets go of the
// deleted objects that wait only for the manager's finalizers (cleanup.go).
//
// No call may wait for ever: every client, ours and Helm's, gets a request timeout
// (DefaultRequestTimeout unless the getter sets one); Options.Timeout bounds a whole install or
// upgrade; and every command returns once its context ends, even from Helm's reads that take no
// context. Install and upgrade check and render everything client-side before they change
// anything, so bad input is an *InvalidError and nothing was applied. An install or upgrade that
// fails, in Helm or in the wait for readiness, becomes a failed revision, and release.Recover
// decides what undoes it (recover.go): the error is then a *RolledBackError saying where the
// release ended. An install that ends with no release gives its namespace back (namespace.go).
package installer
