// Package chart proves charts/kruise: it lints and renders the chart with the Helm SDK and with
// the plain helm CLI, checks the rendered objects against the add-on's contract, and installs and
// upgrades it with plain helm into a real kube-apiserver. It treats values as hostile input:
// every string of the values is set to injection attempts, which the schema must refuse naming
// the field or the render must keep as a scalar; and it applies the daemon's RBAC to the
// apiserver and acts as the daemon's ServiceAccount to show what it may and may not do.
//
// It holds only tests. It may import the Helm SDK, versions/, apis/ (to build objects for the
// RBAC checks) and uninstallgate (to compare the hook's rights with the gate's kinds), and must
// not import the installer's Helm actions (`installer`), whose behaviour it must not depend on.
package chart
