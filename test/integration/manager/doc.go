// Package manager proves kruise-manager's process against a real apiserver: leader election
// between two in-process managers, the webhook certificates and their renewal, caBundle
// patching, readiness, real admission requests through the apiserver, metrics, and what a
// webhook outage does and does not block. Every manager runs in URL mode on 127.0.0.1, in a
// namespace of its own so that its Secret and Lease are its own.
package manager
