// Package bundletest writes small OCI image layouts and serves in-process registries for tests
// of the air-gap bundle. It is imported by tests only, the bundle package's own included, so it
// imports go-containerregistry and the standard library and must not import bundle
// (`installer/bundle`).
package bundletest
