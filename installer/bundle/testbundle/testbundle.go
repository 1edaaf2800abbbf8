package testbundle

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kruise-addon/kruise-addon/charts"
	"github.com/kruise-addon/kruise-addon/installer/bundle"
	"github.com/kruise-addon/kruise-addon/installer/bundle/bundletest"
)

// Write creates a bundle of the embedded chart whose manager and daemon images have one layer
// of layerBytes each, in a temporary directory, and returns its path and manifest.
func Write(t testing.TB, layerBytes int) (string, bundle.Manifest) {
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
	if err := bundletest.WriteLayout(lay, layerBytes, bundletest.ChartRefs(c.Metadata.AppVersion)...); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	m, err := bundle.Create(context.Background(), bundle.CreateOptions{Chart: c, Layout: lay}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "kruise.bundle.tar")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, m
}
