package installer

import (
	"strings"
	"testing"

	"github.com/kruise-addon/kruise-addon/installer/bundle/bundletest"
	"github.com/kruise-addon/kruise-addon/installer/bundle/testbundle"
	"github.com/kruise-addon/kruise-addon/installer/cli"
)

// An install verifies the whole bundle before it reads the cluster's mirror or applies
// anything: a bundle changed since it was created (here a manager manifest rewritten under its
// new digest, the layout's index following it) is bad input naming the bundle and the image,
// even when the mirror holds every genuine image, and not a mirror that lacks something. Values
// that run an image the bundle does not hold (server.enabled, from a bundle created without the
// server) are refused naming the image and the value. Neither applies anything.
func TestInstallFromATamperedBundleAppliesNothing(t *testing.T) {
	const ns = "kruise-airgap-tampered"
	good, _ := testbundle.Write(t, 1024)
	host := bundletest.Registry(t, "", "")
	if code, stdout, stderr := runCLI(t, "bundle", "push", "--bundle", good, "--registry", host); code != cli.ExitOK {
		t.Fatalf("bundle push: exit %d\n%s%s", code, stdout, stderr)
	}
	changed, _ := testbundle.ChangeManifest(t, good, "kruise-addon/kruise-manager")
	base := []string{"install", "-n", ns, "--registry", host, "--wait=false", "--timeout", installTimeout.String()}
	for _, s := range testSet() {
		base = append(base, "--set", s)
	}
	cases := map[string]struct {
		args     []string
		wantCode int
		want     []string
	}{
		"a changed manifest is bad input naming the bundle and the image": {
			args: append([]string{"--bundle", changed}, base...), wantCode: cli.ExitInvalid,
			want: []string{"bundle " + changed + " does not verify", "image kruise-addon/kruise-manager:"},
		},
		"server.enabled from a bundle without the server image is refused naming both": {
			args:     append([]string{"--bundle", good, "--set", "server.enabled=true", "--set", "server.tlsSecret=tls", "--set", "server.tokensSecret=tokens"}, base...),
			wantCode: cli.ExitRefused, want: []string{"the bundle lacks kruise-addon/kruise-addon:", "server.enabled"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "mirror the bundle first") {
				t.Errorf("the bundle's fault reads as the mirror's:\n%s", stderr)
			}
			if namespaceExists(t, ns) {
				t.Errorf("namespace %s was created by an install that was refused", ns)
			}
		})
	}
}
