package main

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

type imageFacts struct {
	User       string
	Entrypoint []string
	OS         string
	Files      []string
	Version    string
}

// mustImage builds the image of s over a sample binary and CA bundle.
func mustImage(t *testing.T, s spec) v1.Image {
	t.Helper()
	img, err := image(s, []byte("binary"), []byte("ca"))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func facts(t *testing.T, s spec) imageFacts {
	t.Helper()
	img := mustImage(t, s)
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	got := imageFacts{User: cf.Config.User, Entrypoint: cf.Config.Entrypoint, OS: cf.OS}
	tr := tar.NewReader(mutate.Extract(img))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			got.Files = append(got.Files, h.Name)
		}
		if h.Name == "etc/image-version" {
			b, _ := io.ReadAll(tr)
			got.Version = string(b)
		}
	}
	sort.Strings(got.Files)
	return got
}

func specByKey(t *testing.T, key, tag string) spec {
	t.Helper()
	for _, s := range specs("1.2.0") {
		if s.key == key && (tag == "" || s.tag == tag) {
			return s
		}
	}
	t.Fatalf("no spec %s %s", key, tag)
	return spec{}
}

func TestImage(t *testing.T) {
	base := []string{"etc/group", "etc/passwd", "etc/ssl/certs/ca-certificates.crt"}
	tests := map[string]struct {
		spec spec
		want imageFacts
	}{
		"the manager runs as the non-root user 65532 from its static binary": {
			spec: specByKey(t, "kruise-manager", ""),
			want: imageFacts{User: "65532:65532", Entrypoint: []string{"/kruise-manager"}, OS: "linux", Files: append([]string{"kruise-manager"}, base...)},
		},
		"the daemon runs as root, as the chart runs it": {
			spec: specByKey(t, "kruise-daemon", ""),
			want: imageFacts{User: "0:0", Entrypoint: []string{"/kruise-daemon"}, OS: "linux", Files: append([]string{"kruise-daemon"}, base...)},
		},
		"a sample image carries its version file": {
			spec: specByKey(t, "sample", "v2"),
			want: imageFacts{User: "65532:65532", Entrypoint: []string{"/sample"}, OS: "linux", Files: append(append([]string{}, base...), "etc/image-version", "sample"), Version: "v2\n"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := facts(t, tc.spec)
			sort.Strings(tc.want.Files)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("image (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDigests(t *testing.T) {
	digest := func(s spec) string {
		d, err := mustImage(t, s).Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d.String()
	}
	tests := map[string]struct {
		a, b     spec
		wantSame bool
	}{
		"the same inputs build the same digest (no timestamps)":                   {a: specByKey(t, "sample", "v1"), b: specByKey(t, "sample", "v1"), wantSame: true},
		"sample versions differ in digest, so an in-place update changes imageID": {a: specByKey(t, "sample", "v1"), b: specByKey(t, "sample", "v2"), wantSame: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantSame, digest(tc.a) == digest(tc.b)); diff != "" {
				t.Errorf("same digest (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAppVersion(t *testing.T) {
	tests := map[string]struct {
		chart   string
		want    string
		wantErr bool
	}{
		"a quoted appVersion is read without quotes": {chart: "apiVersion: v2\nversion: 1.2.0\nappVersion: \"1.2.0\"\n", want: "1.2.0"},
		"a bare appVersion is read":                  {chart: "appVersion: 1.3.0\n", want: "1.3.0"},
		"a chart without appVersion is an error":     {chart: "version: 1.2.0\n", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "Chart.yaml")
			if err := os.WriteFile(p, []byte(tc.chart), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := appVersion(p)
			if diff := cmp.Diff(tc.wantErr, err != nil); diff != "" {
				t.Fatalf("error %v (-want +got):\n%s", err, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("appVersion (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParsePlatforms(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    []string
		wantErr bool
	}{
		"one platform is one architecture":            {in: "linux/amd64", want: []string{"amd64"}},
		"several keep their order and drop repeats":   {in: "linux/arm64, linux/amd64,linux/arm64", want: []string{"arm64", "amd64"}},
		"another OS is refused: the images are linux": {in: "windows/amd64", wantErr: true},
		"a bare architecture is refused":              {in: "amd64", wantErr: true},
		"an empty list is refused":                    {in: " , ", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parsePlatforms(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("architectures (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIndexNamesEachPlatform(t *testing.T) {
	s := specByKey(t, "kruise-manager", "")
	var imgs []v1.Image
	archs := []string{"amd64", "arm64"}
	for _, a := range archs {
		img, err := imageFor(s, []byte("binary-"+a), []byte("ca"), a)
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
	}
	im, err := index(imgs, archs).IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, d := range im.Manifests {
		cf, err := imgs[i].ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d.Platform.String()+" "+cf.OS+"/"+cf.Architecture)
	}
	if diff := cmp.Diff([]string{"linux/amd64 linux/amd64", "linux/arm64 linux/arm64"}, got); diff != "" {
		t.Errorf("index entries: descriptor platform, image config (-want +got):\n%s", diff)
	}
}
