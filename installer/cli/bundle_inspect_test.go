package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kruise-addon/kruise-addon/installer/bundle"
	"github.com/kruise-addon/kruise-addon/installer/bundle/bundletest"
	"github.com/kruise-addon/kruise-addon/installer/bundle/testbundle"
)

// cliCase is a command line, the exit code it must end with and what its output must say.
type cliCase struct {
	args     []string
	wantCode int
	want     []string
}

// runCases runs each case as a subtest.
func runCases(t *testing.T, cases map[string]cliCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := run(t, tc.args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("output lacks %q:\n%s%s", w, out, errOut)
				}
			}
		})
	}
}

// run runs the CLI and returns its exit code, stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// bundle verify exits 0 for a bundle as created and 2 (bad input, as a file that is not a
// bundle) for one changed since, naming the bundle file, the blob and the image it belongs to.
func TestBundleVerify(t *testing.T) {
	good, _ := testbundle.Write(t, 512)
	flipped, layer := testbundle.FlipLayerByte(t, good, "kruise-addon/kruise-manager")
	changed, manifest := testbundle.ChangeManifest(t, good, "kruise-addon/kruise-daemon")
	runCases(t, map[string]cliCase{
		"a bundle as created verifies": {args: []string{"bundle", "verify", good}, wantCode: ExitOK, want: []string{"bundle " + good + " verifies", "not signed"}},
		"a flipped layer byte names the bundle, the layer, its image and platform": {
			args: []string{"bundle", "verify", flipped}, wantCode: ExitInvalid,
			want: []string{"bundle " + flipped + " does not verify", "blob " + layer, "layer of image kruise-addon/kruise-manager:", "linux/amd64"},
		},
		"a changed manifest names the bundle and the image whose digest bundle.json records": {
			args: []string{"bundle", "verify", changed}, wantCode: ExitInvalid,
			want: []string{"bundle " + changed + " does not verify", "image kruise-addon/kruise-daemon:", "index.json " + manifest},
		},
		"without a file it is bad input": {args: []string{"bundle", "verify"}, wantCode: ExitInvalid},
	})
}

// bundle inspect -o json says what a bundle holds: the chart's name and version, each image
// with its tag, digest, platforms and size (per platform too), and whether it is signed.
func TestBundleInspect(t *testing.T) {
	file, m := testbundle.WriteWith(t, testbundle.Options{LayerBytes: 256, Server: true})
	code, out, errOut := run(t, "bundle", "inspect", file, "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var got struct {
		Digest string           `json:"digest"`
		Chart  bundle.ChartInfo `json:"chart"`
		Signed bool             `json:"signed"`
		Images []struct {
			Repository string   `json:"repository"`
			Tag        string   `json:"tag"`
			Digest     string   `json:"digest"`
			Platforms  []string `json:"platforms"`
			Size       int64    `json:"size"`
			Roles      []string `json:"roles"`
			Manifests  []struct {
				Platform string `json:"platform"`
				Digest   string `json:"digest"`
				Size     int64  `json:"size"`
			} `json:"manifests"`
		} `json:"images"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("inspect -o json: %v\n%s", err, out)
	}
	if got.Chart.Name != "kruise" || got.Chart.Version != m.Chart.Version || got.Signed || !strings.HasPrefix(got.Digest, "sha256:") {
		t.Errorf("chart %s %s, signed %v, digest %q; want kruise %s, unsigned, a digest", got.Chart.Name, got.Chart.Version, got.Signed, got.Digest, m.Chart.Version)
	}
	var lines, want []string
	for _, img := range got.Images {
		if len(img.Manifests) != 1 || img.Manifests[0].Size != img.Size || img.Manifests[0].Digest != img.Digest {
			t.Errorf("%s: platform images %+v, want one whose digest and size are the image's", img.Repository, img.Manifests)
		}
		lines = append(lines, img.Repository+":"+img.Tag+"@"+img.Digest+" "+strings.Join(img.Platforms, ",")+" "+strings.Join(img.Roles, ","))
	}
	for _, img := range m.Images {
		var roles []string
		for _, r := range img.Roles {
			roles = append(roles, string(r))
		}
		want = append(want, img.Ref()+"@"+img.Digest+" linux/amd64 "+strings.Join(roles, ","))
	}
	if d := cmp.Diff(want, lines); d != "" {
		t.Errorf("images (-want +got):\n%s", d)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "kruise-addon/kruise-addon:"+m.Chart.AppVersion) {
		t.Errorf("a bundle created with the server lists no server image:\n%s", strings.Join(lines, "\n"))
	}
}

// bundle push verifies the bundle before it sends anything: a tampered bundle (a flipped layer
// byte, even when the registry already holds a blob of that digest; a changed manifest) is
// refused with the verify error, and the registry sees no write. A push prints only the digests
// it pushed, which the registry then serves.
func TestBundlePushVerifiesBeforeItSends(t *testing.T) {
	good, m := testbundle.Write(t, 512)
	host, writes := bundletest.CountingRegistry(t, "", "")
	code, out, errOut := run(t, "bundle", "push", "--bundle", good, "--registry", host, "--chart-repository", "", "-o", "json")
	if code != ExitOK {
		t.Fatalf("push: exit %d\n%s", code, errOut)
	}
	var pushed bundle.Pushed
	if err := json.Unmarshal([]byte(out), &pushed); err != nil {
		t.Fatalf("push -o json: %v\n%s", err, out)
	}
	var want []string
	for _, img := range m.Images {
		want = append(want, host+"/"+img.Repository+"@"+img.Digest)
	}
	sort.Strings(want)
	if d := cmp.Diff(want, pushed.Images); d != "" {
		t.Errorf("pushed digests (-want +got):\n%s", d)
	}

	flipped, layer := testbundle.FlipLayerByte(t, good, "kruise-addon/kruise-manager")
	changed, _ := testbundle.ChangeManifest(t, good, "kruise-addon/kruise-manager")
	cases := map[string]struct {
		file string
		want []string
	}{
		"a flipped layer byte is refused though the registry holds that digest": {
			file: flipped, want: []string{"bundle " + flipped + " does not verify", "blob " + layer, "kruise-addon/kruise-manager"},
		},
		"a changed manifest is refused, not pushed": {
			file: changed, want: []string{"bundle " + changed + " does not verify", "image kruise-addon/kruise-manager:"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := writes()
			code, out, errOut := run(t, "bundle", "push", "--bundle", tc.file, "--registry", host)
			if code != ExitInvalid {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitInvalid, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if strings.Contains(errOut, "mirror the bundle first") || out != "" {
				t.Errorf("a tampered bundle reads as a mirror problem or printed a push:\nstdout: %s\nstderr: %s", out, errOut)
			}
			if n := writes() - before; n != 0 {
				t.Errorf("the registry saw %d writes", n)
			}
		})
	}
}

// bundle create --sign-key signs the bundle; verify --key and install/render --bundle-key
// refuse an unsigned bundle and one the key does not verify, as bad input.
func TestBundleSignature(t *testing.T) {
	priv, pub := testbundle.KeyFiles(t)
	_, otherPub := testbundle.KeyFiles(t)
	layout := t.TempDir()
	if err := bundletest.WriteLayout(layout, 128, bundletest.ChartRefs(testAppVersion(t))...); err != nil {
		t.Fatal(err)
	}
	signed := t.TempDir() + "/signed.tar"
	if code, _, errOut := run(t, "bundle", "create", "--images", layout, "--out", signed, "--sign-key", priv); code != ExitOK {
		t.Fatalf("create --sign-key: exit %d\n%s", code, errOut)
	}
	unsigned, _ := testbundle.Write(t, 128)
	const reg = "mirror.internal:5000/kruise"
	runCases(t, map[string]cliCase{
		"a signed bundle verifies with its key":                  {args: []string{"bundle", "verify", signed, "--key", pub}, wantCode: ExitOK, want: []string{"the signature verifies with the key given"}},
		"a signed bundle is refused with another key":            {args: []string{"bundle", "verify", signed, "--key", otherPub}, wantCode: ExitInvalid, want: []string{"does not verify with the public key given"}},
		"an unsigned bundle is refused when a key is given":      {args: []string{"bundle", "verify", unsigned, "--key", pub}, wantCode: ExitInvalid, want: []string{"the bundle is not signed"}},
		"a signed bundle verifies its content without a key too": {args: []string{"bundle", "verify", signed}, wantCode: ExitOK, want: []string{"give --key to verify the signature"}},
		"render from a signed bundle with its key renders":       {args: []string{"render", "--bundle", signed, "--registry", reg, "--bundle-key", pub}, wantCode: ExitOK, want: []string{reg + "/kruise-addon/kruise-manager@sha256:"}},
		"install from a signed bundle with another key is refused before the cluster": {
			args: []string{"install", "--bundle", signed, "--registry", reg, "--bundle-key", otherPub, "--kubeconfig", unreachable(t)}, wantCode: ExitInvalid, want: []string{"does not verify with the public key given"},
		},
		"install from an unsigned bundle with a key is refused before the cluster": {
			args: []string{"install", "--bundle", unsigned, "--registry", reg, "--bundle-key", pub, "--kubeconfig", unreachable(t)}, wantCode: ExitInvalid, want: []string{"the bundle is not signed"},
		},
	})
	t.Run("the signature is in the bundle: inspect says signed", func(t *testing.T) {
		code, out, errOut := run(t, "bundle", "inspect", signed, "-o", "json")
		if code != ExitOK || !strings.Contains(out, `"signed": true`) {
			t.Errorf("inspect: exit %d\n%s%s", code, out, errOut)
		}
	})
}

// With server.enabled the console API's image is in the bundle (bundle create --server) and
// runs from the mirror by digest; from a bundle without it, the values are refused before
// anything is applied, naming the image and the value that asks for it.
func TestBundleServerImage(t *testing.T) {
	with, m := testbundle.WriteWith(t, testbundle.Options{LayerBytes: 128, Server: true})
	without, _ := testbundle.Write(t, 128)
	const reg = "mirror.internal:5000/kruise"
	serverDigest := ""
	for _, img := range m.Images {
		if img.Repository == "kruise-addon/kruise-addon" {
			serverDigest = img.Digest
		}
	}
	if serverDigest == "" {
		t.Fatalf("bundle create --server made a bundle without the server image: %+v", m.Images)
	}
	server := []string{"--set", "server.enabled=true", "--set", "server.tlsSecret=tls", "--set", "server.tokensSecret=tokens"}
	runCases(t, map[string]cliCase{
		"a bundle with the server image runs it from the mirror by digest": {
			args: append([]string{"render", "--bundle", with, "--registry", reg}, server...), wantCode: ExitOK,
			want: []string{reg + "/kruise-addon/kruise-addon@" + serverDigest},
		},
		"a bundle without it is refused, naming the image and server.enabled": {
			args: append([]string{"render", "--bundle", without, "--registry", reg}, server...), wantCode: ExitRefused,
			want: []string{"the bundle lacks kruise-addon/kruise-addon:" + m.Chart.AppVersion + " (server, which server.enabled runs)"},
		},
		"install from a bundle without it is refused before the cluster": {
			args: append([]string{"install", "--bundle", without, "--registry", reg, "--kubeconfig", unreachable(t)}, server...), wantCode: ExitRefused,
			want: []string{"server.enabled"},
		},
		"a bundle without it renders when the server is off": {
			args: []string{"render", "--bundle", without, "--registry", reg}, wantCode: ExitOK, want: []string{reg + "/kruise-addon/kruise-manager@sha256:"},
		},
	})
}

// testAppVersion is the embedded chart's appVersion.
func testAppVersion(t *testing.T) string {
	t.Helper()
	_, m := testbundle.Write(t, 16)
	return m.Chart.AppVersion
}

// unreachable writes a kubeconfig whose cluster nobody serves: a command that reached for the
// cluster would fail with exit 1.
func unreachable(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	const cfg = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
