// Package integration holds the suites that need a real kube-apiserver and etcd: the CRD wire
// contract, manifests round-tripping through the schemas, defaults and admission errors, and
// kubectl's view of our kinds. The control plane is started once per package in TestMain.
//
// Test data lives in testdata/: samples/ (realistic manifests that must come back unchanged),
// defaults/ (a minimal object, then the subset expected after defaulting) and invalid/ (objects
// the apiserver must reject; the first line "# want: <text>" names the field the error must name).
package integration
