// Package internal holds the machinery the workload controllers share: expectations (waiting for
// the cache to see our own writes), revision history, in-place update, lifecycle hooks and the
// scale-down order. Each sub-package is small and knows nothing of a particular workload kind;
// none of them imports a controller package.
package internal
