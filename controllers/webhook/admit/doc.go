// Package admit is the admission kit every kind's webhook package is built on: one generic
// defaulting handler and one generic validating handler over a kind's pure functions, so that a
// kind package keeps only what is its own (paths, defaults, validation, the extra reads it
// needs).
//
// A kind declares its handlers as Webhooks: the group, version and name its 1.8 paths are made
// of (/mutate-<group with dashes>-<version>-<name>, the version left out for the kinds 1.8
// serves unversioned), and a builder per handler that gets an Env (the manager, the shared
// setup.Deps, and a Kind carrying the kind's name and the manager's decoder). Webhooks.Handlers
// is the kind's setup.Webhooks. A kind whose defaults or validation read nothing but the objects
// declares PureDefaulting / PureValidating (with Options such as ReadOld and LetDeletingPass);
// one validated against the others of its namespace wraps its validation in AgainstOthers, and
// one checked against a pod it names reads it with Pod.
//
// The answers are part of what users see, and stay those the kinds' own handlers gave:
//   - an object that does not decode: 400 "decode <kind>: ..." ("decode old <kind>: ..." for the
//     stored object);
//   - field errors: 422 with the field.ErrorList aggregate;
//   - a protected deletion: whatever the shared deletionprotection.Guard answers (403 with the
//     reason, logged, unless the Guard lets deletions in terminating namespaces through);
//   - an error a kind's function wraps with Refuse: that code and the error's own message;
//     any other error: 500.
//
// controller-runtime's typed admission.WithDefaulter / WithValidator would answer a decoding
// failure without the kind's name and a validation error with 403, so the kit does not use them.
//
// It lives under controllers/webhook because only the kinds' webhook packages use it; kind
// packages (controllers/<kind>) stay clear of the webhook packages. It imports Kubernetes and
// controller-runtime packages and controllers/webhook/deletionprotection (for the Guard); it
// must not import a kind's package, the manager or the webhook server (`controllers/...` other
// than `controllers/setup` and `controllers/webhook/deletionprotection`).
package admit
