// Package persistentpodstate holds the PersistentPodState validating admission handler
// ("/validate-apps-kruise-io-persistentpodstate"): a targetRef naming a StatefulSet (apps or
// apps.kruise.io) that no other PersistentPodState of the namespace targets and that never
// changes, a required or preferred topology with valid node label keys, preferred weights of 1
// to 100, and valid annotation keys. Validation is a pure function; the handler only decodes,
// lists the namespace's other PersistentPodStates and answers.
//
// It imports apis/, controllers/setup and controllers/persistentpodstate/podhook; it must not
// import the manager, other webhook packages or other controllers (`controllers/...` other than
// `controllers/setup`, `controllers/persistentpodstate/podhook` and the pod webhook's
// `controllers/webhook/pod`, whose Step interface podhook implements).
package persistentpodstate
