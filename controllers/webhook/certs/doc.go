// Package certs owns the webhook server's certificates: a self-signed CA and a serving
// certificate for Service kruise-webhook-service (and the --webhook-host in URL mode), kept in
// Secret kruise-webhook-certs with the 1.8 keys, written to the server's cert dir, and renewed
// before they expire. Several managers share the Secret: the first one creates it, the others
// read it, and every update is conditional on the resourceVersion it read.
//
// generate.go makes certificates, decide.go is the pure renewal decision, rotator.go does the
// API reads and writes. It must not import controller-runtime's manager
// (`sigs.k8s.io/controller-runtime/pkg/manager`) or any kind package (`controllers/...`).
package certs
