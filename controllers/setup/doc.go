// Package setup owns the types by which kind packages plug into kruise-manager: Deps (what a
// controller or webhook gets from the manager), Controller and Webhooks. It is a leaf: it
// imports only controller-runtime, client-go, component-base's featuregate and k8s.io/utils,
// and must not import a kind package or the manager (`controllers/...`).
package setup
