// Package cmd holds one tiny main per binary: kruise-manager, kruise-daemon and kruise-addon.
// Each main only builds its options from flags and calls into controllers/, daemon/ or
// installer/; no logic lives here.
package cmd
