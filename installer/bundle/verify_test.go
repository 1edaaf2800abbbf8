package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kruise-addon/kruise-addon/installer/bundle/bundletest"
)

// tampered is a bundle's entries as a test edits them, with lookups into its layout.
type tampered struct {
	t       *testing.T
	entries []tarEntry
	m       Manifest
}

func (tb *tampered) entry(name string) *tarEntry {
	tb.t.Helper()
	for i := range tb.entries {
		if tb.entries[i].name == name {
			return &tb.entries[i]
		}
	}
	tb.t.Fatalf("no entry %s in the bundle", name)
	return nil
}

func (tb *tampered) blob(digest string) *tarEntry {
	return tb.entry(blobsPrefix + strings.TrimPrefix(digest, "sha256:"))
}

// image is the bundle image whose repository ends in suffix.
func (tb *tampered) image(suffix string) Image {
	tb.t.Helper()
	for _, img := range tb.m.Images {
		if strings.HasSuffix(img.Repository, suffix) {
			return img
		}
	}
	tb.t.Fatalf("no image %s in the bundle", suffix)
	return Image{}
}

// manifest is the image manifest of img (for an index, its platform's).
func (tb *tampered) manifest(img Image, platform string) (string, v1.Manifest) {
	tb.t.Helper()
	dg := img.Digest
	if strings.Contains(img.MediaType, "index") {
		var ii v1.IndexManifest
		if err := json.Unmarshal(tb.blob(dg).data, &ii); err != nil {
			tb.t.Fatal(err)
		}
		for _, d := range ii.Manifests {
			if d.Platform.String() == platform {
				dg = d.Digest.String()
			}
		}
	}
	var m v1.Manifest
	if err := json.Unmarshal(tb.blob(dg).data, &m); err != nil {
		tb.t.Fatal(err)
	}
	return dg, m
}

// rename moves the blob of digest old to the digest of its (edited) content, and points the
// layout's index at it, as a careful forger would: every name in the archive then agrees
// with its content. It returns the new digest.
func (tb *tampered) rename(old string) string {
	tb.t.Helper()
	e := tb.blob(old)
	sum := sha256.Sum256(e.data)
	nd := "sha256:" + hex.EncodeToString(sum[:])
	e.name = blobsPrefix + nd[len("sha256:"):]
	idx := tb.entry(indexFile)
	idx.data = []byte(strings.ReplaceAll(string(idx.data), old, nd))
	var im v1.IndexManifest
	if err := json.Unmarshal(idx.data, &im); err != nil {
		tb.t.Fatal(err)
	}
	for i := range im.Manifests {
		if im.Manifests[i].Digest.String() == nd {
			im.Manifests[i].Size = int64(len(e.data))
		}
	}
	b, err := json.Marshal(im)
	if err != nil {
		tb.t.Fatal(err)
	}
	idx.data = b
	return nd
}

func (tb *tampered) editManifest(f func(*Manifest)) {
	tb.t.Helper()
	m := tb.m
	m.Images = append([]Image(nil), tb.m.Images...)
	f(&m)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		tb.t.Fatal(err)
	}
	tb.entry(manifestFile).data = append(b, '\n')
}

func flip(data []byte, at int) { data[at] ^= 0x01 }

// bundle verify: every blob is hashed against its digest, every manifest and index checked down
// to its layers, the chart against its digest and the layout's index against bundle.json, by
// Read (install, render, verify, inspect) and Open (push) alike. The first failure names the
// bundle file and the blob, with the image and platform it belongs to.
func TestBundleVerifyNamesTheBundleAndTheBlob(t *testing.T) {
	c := kruiseChart(t)
	single, singleM := writeBundle(t, c, testLayout(t, c))
	multiDir := filepath.Join(t.TempDir(), "layout")
	platforms := []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64", Variant: "v8"}}
	if err := bundletest.WriteIndexLayout(multiDir, 256, platforms, bundletest.ChartRefs(c.Metadata.AppVersion)...); err != nil {
		t.Fatal(err)
	}
	multi, multiM := writeBundle(t, c, multiDir)
	av := c.Metadata.AppVersion
	manager, daemon := "kruise-addon/kruise-manager:"+av, "kruise-addon/kruise-daemon:"+av

	cases := map[string]struct {
		multi bool
		edit  func(tb *tampered) []string // returns what the error must name
	}{
		"a flipped byte in a layer names the layer, its image and its platform": {
			edit: func(tb *tampered) []string {
				_, m := tb.manifest(tb.image("kruise-manager"), "")
				flip(tb.blob(m.Layers[0].Digest.String()).data, 100)
				return []string{"blob " + m.Layers[0].Digest.String(), "layer of image " + manager + " linux/amd64", "content has digest"}
			},
		},
		"a flipped byte in the arm64 layer of a multi-platform image names that platform": {
			multi: true,
			edit: func(tb *tampered) []string {
				_, m := tb.manifest(tb.image("kruise-daemon"), "linux/arm64/v8")
				flip(tb.blob(m.Layers[0].Digest.String()).data, 7)
				return []string{"blob " + m.Layers[0].Digest.String(), "layer of image " + daemon + " linux/arm64/v8"}
			},
		},
		"a manifest changed in place names the manifest blob and its image": {
			edit: func(tb *tampered) []string {
				dg, _ := tb.manifest(tb.image("kruise-daemon"), "")
				e := tb.blob(dg)
				e.data = []byte(strings.Replace(string(e.data), `"schemaVersion":2`, `"schemaVersion":3`, 1))
				return []string{"blob " + dg, "manifest of image " + daemon, "content has digest"}
			},
		},
		"a manifest changed and renamed, the layout's index following it, names the image whose digest bundle.json records": {
			edit: func(tb *tampered) []string {
				img := tb.image("kruise-manager")
				e := tb.blob(img.Digest)
				e.data = []byte(strings.Replace(string(e.data), `"schemaVersion":2`, `"schemaVersion":3`, 1))
				nd := tb.rename(img.Digest)
				return []string{"image " + manager, "bundle.json names " + img.Digest, "index.json " + nd}
			},
		},
		"a digest changed in bundle.json names the image and both digests": {
			edit: func(tb *tampered) []string {
				img := tb.image("kruise-daemon")
				forged := "sha256:" + strings.Repeat("ab", 32)
				tb.editManifest(func(m *Manifest) {
					for i := range m.Images {
						if m.Images[i].Ref() == img.Ref() {
							m.Images[i].Digest = forged
						}
					}
				})
				return []string{"image " + daemon, "bundle.json names " + forged, "index.json " + img.Digest}
			},
		},
		"a platform added in bundle.json names the image": {
			edit: func(tb *tampered) []string {
				tb.editManifest(func(m *Manifest) { m.Images[0].Platforms = append(m.Images[0].Platforms, "linux/s390x") })
				return []string{"image " + tb.m.Images[0].Ref(), "linux/s390x"}
			},
		},
		"a changed layout index names images/index.json": {
			edit: func(tb *tampered) []string {
				idx := tb.entry(indexFile)
				idx.data = append(idx.data, ' ')
				return []string{"entry images/index.json", "bundle.json records " + tb.m.Index}
			},
		},
		"a changed chart names the chart's entry": {
			edit: func(tb *tampered) []string {
				e := tb.entry(tb.m.Chart.File)
				flip(e.data, len(e.data)-10)
				return []string{"entry " + tb.m.Chart.File, "records sha256:" + tb.m.Chart.Digest}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			src, m := single, singleM
			if tc.multi {
				src, m = multi, multiM
			}
			tb := &tampered{t: t, entries: readEntries(t, src), m: m}
			want := tc.edit(tb)
			p := writeEntries(t, tb.entries)
			for fn, open := range map[string]func(string) (*Bundle, error){"Open": Open, "Read": Read} {
				b, err := open(p)
				if err == nil {
					b.Close()
					t.Errorf("%s accepted the tampered bundle", fn)
					continue
				}
				var ve *VerifyError
				if !errors.As(err, &ve) {
					t.Errorf("%s: error %q is not a *VerifyError", fn, err)
				}
				for _, part := range append(want, "bundle "+p+" does not verify") {
					if !strings.Contains(err.Error(), part) {
						t.Errorf("%s: error %q lacks %q", fn, err, part)
					}
				}
			}
		})
	}

	t.Run("the bundles as created verify, each platform's image listed", func(t *testing.T) {
		for _, p := range []string{single, multi} {
			b, err := Read(p)
			if err != nil {
				t.Fatalf("read %s: %v", p, err)
			}
			for _, ic := range b.Images {
				if len(ic.Manifests) != len(ic.Platforms) {
					t.Errorf("%s: %d platform images for platforms %v", ic.Ref(), len(ic.Manifests), ic.Platforms)
				}
			}
		}
	})
}
