// Package internal holds the machinery the workload controllers share: expectations (waiting for
// the cache to see our own writes), revision history, in-place update, lifecycle hooks, the
// scale-down order and bounded slow-start pod creation (slowstart). Each sub-package is small and knows nothing of a particular workload kind;
// none of them imports a controller package.
package internal
