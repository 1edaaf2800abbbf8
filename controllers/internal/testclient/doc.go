// Package testclient builds the fake clients of the unit tests of the workload controllers and
// their kits: the add-on's scheme, the objects a test starts from, and the status subresource of
// pods and of those objects' kinds, as the apiserver serves them. Behaviour that the real
// apiserver decides is proven in test/integration, not with these clients.
//
// It is imported by tests only. It must not import any controller package (`controllers/...`
// other than `controllers/internal/...`).
package testclient
