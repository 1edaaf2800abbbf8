// Package cmd holds one tiny main per binary: kruise-manager, kruise-daemon, kruise-addon and
// the kubectl plugin kubectl-kruise.
// Each main only builds its options from flags and calls into controllers/, daemon/ or
// installer/ (kubectlplugin/ for the plugin); no logic lives here.
package cmd
