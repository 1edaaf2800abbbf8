// Package server tests `kruise-addon serve` against the real kube-apiserver with simulated
// nodes: preflight, an install followed through its event stream, 409 on a concurrent
// operation, status health issues, roles, and a server killed mid-install whose successor
// reports the release stuck and unlocks it. Every response is validated against the OpenAPI
// document.
package server
