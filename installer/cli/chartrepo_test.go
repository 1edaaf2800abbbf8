package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/kruise-addon/kruise-addon/installer/bundle/testbundle"
)

// bundle chart-repo writes the registry the images are mirrored to into the chart it packages,
// as bundle push does: imageRegistry, and with --bundle each image by digest, so that plain helm
// installs the chart as it is found. Without --registry the chart would name no registry at all.
func TestChartRepoWritesTheMirrorIntoTheChart(t *testing.T) {
	bundlePath, manifest := testbundle.Write(t, 64)
	digest := map[string]string{}
	for _, img := range manifest.Images {
		for _, role := range img.Roles {
			digest[string(role)] = img.Digest
		}
	}
	cases := map[string]struct {
		args       []string
		wantCode   int
		wantErr    string
		wantValues map[string]any // top-level imageRegistry and <role>.image.tag
	}{
		"the embedded chart names the registry": {
			args:       []string{"--registry", "mirror.example.com:5000/kruise"},
			wantValues: map[string]any{"imageRegistry": "mirror.example.com:5000/kruise", "manager.tag": "", "daemon.tag": ""},
		},
		"a bundle's chart names the registry and runs each image by digest": {
			args:       []string{"--registry", "mirror.example.com:5000/kruise", "--bundle", bundlePath},
			wantValues: map[string]any{"imageRegistry": "mirror.example.com:5000/kruise", "manager.tag": digest["manager"], "daemon.tag": digest["daemon"]},
		},
		"without --registry is bad input naming it": {wantCode: ExitInvalid, wantErr: "--registry"},
		"a registry with a scheme is bad input":     {args: []string{"--registry", "https://mirror.example.com"}, wantCode: ExitInvalid, wantErr: "without a scheme"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var out, errOut bytes.Buffer
			code := Run(context.Background(), append([]string{"bundle", "chart-repo", "--out", dir, "-o", "json"}, tc.args...), &out, &errOut)
			if diff := cmp.Diff(tc.wantCode, code); diff != "" {
				t.Fatalf("exit code (-want +got):\n%s\nstderr: %s", diff, errOut.String())
			}
			if tc.wantErr != "" {
				if msg := out.String() + errOut.String(); !strings.Contains(msg, tc.wantErr) {
					t.Errorf("the error lacks %q:\n%s", tc.wantErr, msg)
				}
				return
			}
			files, err := filepath.Glob(filepath.Join(dir, "*.tgz"))
			if err != nil || len(files) != 1 {
				t.Fatalf("packaged charts in %s: %v, %v", dir, files, err)
			}
			c, err := loader.Load(files[0])
			if err != nil {
				t.Fatal(err)
			}
			tag := func(role string) any {
				return c.Values[role].(map[string]any)["image"].(map[string]any)["tag"]
			}
			got := map[string]any{"imageRegistry": c.Values["imageRegistry"], "manager.tag": tag("manager"), "daemon.tag": tag("daemon")}
			if diff := cmp.Diff(tc.wantValues, got); diff != "" {
				t.Errorf("the packaged chart's values (-want +got):\n%s", diff)
			}
		})
	}
}
