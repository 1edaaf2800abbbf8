// Package featurestest holds what the tests of both binaries need of the feature gates, such as
// every gate turned on. It imports the features package; it must not import any other package of
// the add-on (`...` other than `features`).
package featurestest
