// Package imagepulljob holds the ImagePullJob and ImageListPullJob validating admission handlers:
// the rules the CRD schema cannot express (image references that parse, label selectors that
// parse, no duplicated node names or images, deadline and TTL only with completionPolicy Always)
// and the refusal of both kinds while the KruiseDaemon or ImagePullJobGate gate is off, so nobody
// creates a job no controller would run. Validation is a pure function; the admission kit
// (controllers/webhook/admit) decodes and answers.
//
// It imports apis/, controllers/setup, features/ and the admission kit; it must not import the
// manager, other webhook packages or any controller (`controllers/...` other than
// `controllers/setup`, the kit `controllers/webhook/admit` and the deletion guard it holds,
// `controllers/webhook/deletionprotection`).
package imagepulljob
