package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDoesNotLinkTheInstaller keeps the manager binary free of the installer library (and with
// it Helm): the uninstall-check subcommand uses the shared uninstallgate package instead.
func TestDoesNotLinkTheInstaller(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var linked []string
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/kruise-addon/kruise-addon/installer") || strings.HasPrefix(pkg, "helm.sh/") {
			linked = append(linked, pkg)
		}
	}
	if diff := cmp.Diff([]string(nil), linked); diff != "" {
		t.Errorf("kruise-manager links (-want +got):\n%s", diff)
	}
}
