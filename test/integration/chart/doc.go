// Package chart proves charts/kruise: it lints and renders the chart with the Helm SDK and with
// the plain helm CLI, checks the rendered objects against the add-on's contract, and installs and
// upgrades it with plain helm into a real kube-apiserver.
//
// It holds only tests. It may import the Helm SDK, versions/ and uninstallgate (to compare the
// hook's rights with the gate's kinds), and must not import the installer's Helm actions, whose
// behaviour it must not depend on.
package chart
