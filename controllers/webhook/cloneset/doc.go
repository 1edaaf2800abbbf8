// Package cloneset holds the CloneSet admission handlers: defaulting (the defaults the CRD
// schema cannot express, such as the pod template's core defaults) and validation (the rules
// CEL cannot express: cross-field bounds scaled against replicas, a name short enough for its
// pods' revision label, podsToDelete naming pods of this CloneSet, which spec fields may
// change). Validation is a pure function over the objects plus the pods the validating handler
// has read; the admission kit (controllers/webhook/admit) decodes, answers and guards deletion.
//
// The validating handler reads pods only in the namespace the admission request names, and
// mostly from the manager's cache, so that a long podsToDelete list costs no API call per name.
// It answers a name that is no pod and a name of another owner's pod alike, so that it does not
// tell whether a pod exists.
//
// It imports apis/, controllers/setup, features/, controllers/internal/revision (for the
// revision name the label limit follows), controllers/webhook/coredefaults (the core container
// and volume defaults), the admission kit and the deletion protection guard; it must not import
// the manager, other webhook packages or any controller (`controllers/...` other than
// `controllers/setup`, `controllers/internal/revision`, `controllers/webhook/coredefaults`,
// `controllers/webhook/admit`, the shared pod-template checks `controllers/webhook/podtemplate`
// and `controllers/webhook/deletionprotection`).
package cloneset
