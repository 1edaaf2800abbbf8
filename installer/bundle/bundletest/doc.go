// Package bundletest writes small OCI image layouts and serves in-process registries for tests
// of the air-gap bundle. It is imported by tests only.
package bundletest
