// Package revision keeps a workload's template history as ControllerRevisions: it hashes a
// template patch (with the collision count, so that a hash collision can be stepped over), names
// and builds revisions, finds an existing revision equal to a template (which is how a rollback
// reuses its old revision), and trims history. It must not import any controller package
// (`controllers/...` other than `controllers/internal/...`).
package revision
