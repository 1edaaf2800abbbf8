package testbundle

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kruise-addon/kruise-addon/charts"
	"github.com/kruise-addon/kruise-addon/installer/bundle"
	"github.com/kruise-addon/kruise-addon/installer/bundle/bundletest"
)

// Options say what bundle WriteWith creates.
type Options struct {
	// LayerBytes is the size of each image's one layer.
	LayerBytes int
	// Server adds the console API's image.
	Server bool
	// SignKey is a PEM private key to sign the bundle with.
	SignKey []byte
}

// Write creates a bundle of the embedded chart whose manager and daemon images have one layer
// of layerBytes each, in a temporary directory, and returns its path and manifest.
func Write(t testing.TB, layerBytes int) (string, bundle.Manifest) {
	t.Helper()
	return WriteWith(t, Options{LayerBytes: layerBytes})
}

// WriteWith is Write with the console API's image or a signature.
func WriteWith(t testing.TB, o Options) (string, bundle.Manifest) {
	t.Helper()
	fsys, err := charts.Kruise()
	if err != nil {
		t.Fatal(err)
	}
	c, err := bundle.PackageChart(fsys)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	lay := filepath.Join(dir, "layout")
	refs := bundletest.ChartRefs(c.Metadata.AppVersion)
	if o.Server {
		refs = append(refs, bundletest.ServerRef(c.Metadata.AppVersion))
	}
	if err := bundletest.WriteLayout(lay, o.LayerBytes, refs...); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	m, err := bundle.Create(context.Background(), bundle.CreateOptions{Chart: c, Layout: lay, Server: o.Server, SignKey: o.SignKey}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "kruise.bundle.tar")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, m
}

// KeyFiles writes a new ECDSA P-256 key pair as PEM files and returns their paths.
func KeyFiles(t testing.TB) (private, public string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	private, public = filepath.Join(dir, "bundle.key"), filepath.Join(dir, "bundle.pub")
	if err := os.WriteFile(private, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(public, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644); err != nil {
		t.Fatal(err)
	}
	return private, public
}

// entry is one file of a bundle's archive.
type entry = bundletest.Entry

// edit writes a copy of the bundle at src with f applied to its entries, and returns its path.
func edit(t testing.TB, src string, f func(es []entry)) string {
	t.Helper()
	es, err := bundletest.ReadEntries(src)
	if err != nil {
		t.Fatal(err)
	}
	f(es)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range es {
		if err := tw.WriteHeader(&tar.Header{Name: e.Name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(e.Data))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "tampered.bundle.tar")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const blobs = "images/blobs/sha256/"

func find(t testing.TB, es []entry, name string) *entry {
	t.Helper()
	for i := range es {
		if es[i].Name == name {
			return &es[i]
		}
	}
	t.Fatalf("no entry %s in the bundle", name)
	return nil
}

// manifestOf is the digest of the image manifest of the image whose repository is repository
// in the bundle's bundle.json (a one-platform image, as Write makes).
func manifestOf(t testing.TB, es []entry, repository string) string {
	t.Helper()
	var m bundle.Manifest
	if err := json.Unmarshal(find(t, es, "bundle.json").Data, &m); err != nil {
		t.Fatal(err)
	}
	for _, img := range m.Images {
		if img.Repository == repository {
			return img.Digest
		}
	}
	t.Fatalf("no image %s in the bundle", repository)
	return ""
}

// FlipLayerByte writes a copy of the bundle at src with one byte flipped in the layer of the
// image of that repository, and returns its path and the layer's digest.
func FlipLayerByte(t testing.TB, src, repository string) (string, string) {
	t.Helper()
	var layer string
	p := edit(t, src, func(es []entry) {
		var m struct {
			Layers []struct {
				Digest string `json:"digest"`
			} `json:"layers"`
		}
		if err := json.Unmarshal(find(t, es, blobs+strings.TrimPrefix(manifestOf(t, es, repository), "sha256:")).Data, &m); err != nil {
			t.Fatal(err)
		}
		layer = m.Layers[0].Digest
		find(t, es, blobs+strings.TrimPrefix(layer, "sha256:")).Data[0] ^= 0x01
	})
	return p, layer
}

// ChangeManifest writes a copy of the bundle at src whose image of that repository has a
// changed manifest (same size) under its new digest, the layout's index pointing at it, as a
// careful forger would leave it; bundle.json still names the old one. It returns the path and
// the changed manifest's digest.
func ChangeManifest(t testing.TB, src, repository string) (string, string) {
	t.Helper()
	var changed string
	p := edit(t, src, func(es []entry) {
		old := manifestOf(t, es, repository)
		e := find(t, es, blobs+strings.TrimPrefix(old, "sha256:"))
		e.Data = []byte(strings.Replace(string(e.Data), `"schemaVersion":2`, `"schemaVersion":3`, 1))
		sum := sha256.Sum256(e.Data)
		changed = "sha256:" + hex.EncodeToString(sum[:])
		e.Name = blobs + changed[len("sha256:"):]
		idx := find(t, es, "images/index.json")
		idx.Data = []byte(strings.ReplaceAll(string(idx.Data), old, changed))
	})
	return p, changed
}
