// Package kinds owns the one list of the add-on's kinds and their CRDs: for every kind its
// group, served versions, storage version, resource, scope, CRD name, and whether users create
// it (NodeImage and NodePodProbe are made by the manager, one per node). Everything that must
// know "which CRDs and kinds are ours" reads it: the installer's facts, preflight, CRD apply and
// CRD delete, and the uninstall gate. A test checks it against charts/kruise/files/crds and
// against the scheme, so it can never drift from what is served.
//
// It is a leaf: it imports only k8s.io/apimachinery and must not import any other package of
// the add-on (`...`), apis/ included (the test does).
package kinds
