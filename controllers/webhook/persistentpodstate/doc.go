// Package persistentpodstate holds the PersistentPodState validating admission handler
// ("/validate-apps-kruise-io-persistentpodstate"): a targetRef naming a StatefulSet (apps or
// apps.kruise.io) that no other PersistentPodState of the namespace targets and that never
// changes, a required or preferred topology with valid node label keys, preferred weights of 1 to
// 100, and valid annotation keys. Validation is a pure function; the handler lists the namespace's
// other PersistentPodStates, and the admission kit (controllers/webhook/admit) decodes and
// answers.
//
// It imports apis/, controllers/setup, the admission kit and
// controllers/persistentpodstate/restore; it must not import the manager, other webhook packages
// or other controllers (`controllers/...` other than `controllers/setup`,
// `controllers/persistentpodstate/restore` and the `controllers/internal/...` leaves it builds
// on, the kit `controllers/webhook/admit` and the deletion guard it holds,
// `controllers/webhook/deletionprotection`, and `controllers/webhook/fieldrule`).
package persistentpodstate
