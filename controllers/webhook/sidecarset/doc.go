// Package sidecarset holds the SidecarSet admission handlers: defaulting (the 1.8 defaults of the
// update strategy, the sidecars and their core container fields, plus the two revision hashes
// stamped on the SidecarSet) and validation (the rules CEL cannot express, and the
// cross-SidecarSet check that two SidecarSets selecting the same pods do not inject a container of
// one name). Validation is a pure function over the SidecarSet, its old version and the other
// SidecarSets; the validating handler reads the manager's cache, and the admission kit
// (controllers/webhook/admit) decodes and answers.
//
// It imports apis/, controllers/setup, features/, controllers/webhook/coredefaults and
// controllers/sidecarset/inject (for the revision hash), the admission kit and its field rules; it
// must not import the manager, other webhook packages (coredefaults, admit and fieldrule aside)
// or any controller
// (`controllers/...` other than `controllers/setup`, `controllers/webhook/coredefaults`,
// `controllers/sidecarset/inject` and what inject imports, `controllers/internal/...`, the kit
// `controllers/webhook/admit` and the deletion guard it holds,
// `controllers/webhook/deletionprotection`, and `controllers/webhook/fieldrule`).
package sidecarset
