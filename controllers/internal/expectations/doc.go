// Package expectations remembers the writes a controller made and has not yet seen in its
// informer cache, so that a reconcile never decides from a cache that predates its own creates,
// deletes or updates. It must not import any controller package (`controllers/...` other than
// `controllers/internal/...`).
package expectations
