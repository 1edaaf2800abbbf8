// Package testbundle writes a bundle of the embedded chart with small synthetic images, for the
// tests of the packages that install from bundles. It is imported by tests only; the bundle
// package's own tests cannot import it (it imports bundle) and use bundletest directly.
package testbundle
