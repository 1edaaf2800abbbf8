// Package statefulset proves the Advanced StatefulSet controller and webhooks against a real
// kube-apiserver with simulated nodes. Test names follow the upstream e2e titles of the
// behaviours they cover.
package statefulset
