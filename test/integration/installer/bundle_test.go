package installer

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/installer"
	"github.com/kruise-addon/kruise-addon/installer/bundle/bundletest"
	"github.com/kruise-addon/kruise-addon/installer/bundle/testbundle"
	"github.com/kruise-addon/kruise-addon/installer/cli"
)

// An install from a bundle checks the mirror for every image before it applies anything: a
// mirror that lacks them refuses the install, naming each one; once `bundle push` has
// mirrored them, the install runs every image, the uninstall hook's included, from the mirror
// by digest. The mirror requires basic auth, given as a user name and the password variable.
func TestInstallFromBundle(t *testing.T) {
	const ns = "kruise-airgap"
	file, m := testbundle.Write(t, 1024)
	host := bundletest.Registry(t, "ci", "s3cret")
	t.Setenv(cli.PasswordEnv, "s3cret")
	digest := map[string]string{}
	for _, img := range m.Images {
		digest[img.Repository] = img.Digest
	}
	args := []string{"install", "-n", ns, "--bundle", file, "--registry", host, "--registry-username", "ci",
		"--wait=false", "--timeout", installTimeout.String()}
	for _, s := range testSet() {
		args = append(args, "--set", s)
	}

	code, stdout, stderr := runCLI(t, append(args, "-o", "json")...)
	if diff := cmp.Diff(cli.ExitRefused, code); diff != "" {
		t.Fatalf("install against an empty mirror: exit code (-want +got):\n%s\nstdout: %s\nstderr: %s", diff, stdout, stderr)
	}
	var doc struct {
		Error   string                  `json:"error"`
		Refused *installer.RefusedError `json:"refused"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || doc.Refused == nil {
		t.Fatalf("the refusal is not one JSON document with refused set (%v):\n%s", err, stdout)
	}
	wantMissing := []string{
		"kruise-addon/kruise-daemon@" + digest["kruise-addon/kruise-daemon"] + " (daemon)",
		"kruise-addon/kruise-manager@" + digest["kruise-addon/kruise-manager"] + " (manager, hook)",
	}
	if diff := cmp.Diff(wantMissing, doc.Refused.MissingImages); diff != "" {
		t.Errorf("refused.missingImages (-want +got):\n%s", diff)
	}
	for _, img := range wantMissing {
		if !strings.Contains(doc.Error, img) {
			t.Errorf("the error does not name %s:\n%s", img, doc.Error)
		}
	}
	if namespaceExists(t, ns) {
		t.Errorf("namespace %s was created by an install the mirror could not serve", ns)
	}

	code, stdout, stderr = runCLI(t, "bundle", "push", "--bundle", file, "--registry", host, "--registry-username", "ci")
	if code != cli.ExitOK {
		t.Fatalf("bundle push: exit %d\n%s%s", code, stdout, stderr)
	}

	code, stdout, stderr = runCLI(t, args...)
	if code != cli.ExitOK {
		t.Fatalf("install from the bundle: exit %d\n%s%s", code, stdout, stderr)
	}
	i, _ := newInstaller(t)
	t.Cleanup(func() { uninstall(t, i, ns) })

	manager := host + "/kruise-addon/kruise-manager@" + digest["kruise-addon/kruise-manager"]
	daemon := host + "/kruise-addon/kruise-daemon@" + digest["kruise-addon/kruise-daemon"]
	got := map[string]string{"manager": managerDeployment(t, ns).Spec.Template.Spec.Containers[0].Image}
	ds, err := env.Clientset.AppsV1().DaemonSets(ns).Get(context.Background(), "kruise-daemon", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got["daemon"] = ds.Spec.Template.Spec.Containers[0].Image
	rel := lastRelease(t, ns, installer.DefaultReleaseName)
	for _, h := range rel.Hooks {
		for _, line := range strings.Split(h.Manifest, "\n") {
			if s := strings.TrimSpace(line); strings.HasPrefix(s, "image:") {
				got["hook "+h.Name] = strings.Trim(strings.TrimSpace(strings.TrimPrefix(s, "image:")), `"`)
			}
		}
	}
	want := map[string]string{"manager": manager, "daemon": daemon}
	for _, h := range rel.Hooks {
		if strings.Contains(h.Manifest, "image:") {
			want["hook "+h.Name] = manager
		}
	}
	if len(want) < 3 {
		t.Errorf("the release stores no hook with an image, so the hook's image is unproven: %d hooks", len(rel.Hooks))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("images the release runs (-want +got):\n%s", diff)
	}

	// An upgrade checks its mirror too: one that lacks the images is refused and the release
	// keeps its revision.
	before := rel.Version
	empty := bundletest.Registry(t, "", "")
	code, _, stderr = runCLI(t, "upgrade", "-n", ns, "--bundle", file, "--registry", empty, "--wait=false")
	if diff := cmp.Diff(cli.ExitRefused, code); diff != "" {
		t.Errorf("upgrade against an empty mirror: exit code (-want +got):\n%s\nstderr: %s", diff, stderr)
	}
	if !strings.Contains(stderr, "registry "+empty+" lacks kruise-addon/kruise-daemon@"+digest["kruise-addon/kruise-daemon"]) {
		t.Errorf("the upgrade's refusal does not name the registry and the daemon image:\n%s", stderr)
	}
	if diff := cmp.Diff(before, lastRelease(t, ns, installer.DefaultReleaseName).Version); diff != "" {
		t.Errorf("release revision after the refused upgrade (-want +got):\n%s", diff)
	}
}
