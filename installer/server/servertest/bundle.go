package servertest

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"testing/fstest"

	"github.com/kruise-addon/kruise-addon/charts"
	"github.com/kruise-addon/kruise-addon/installer/bundle"
	"github.com/kruise-addon/kruise-addon/installer/bundle/bundletest"
	"github.com/kruise-addon/kruise-addon/installer/bundle/testbundle"
)

// chartVersion is the version and appVersion lines of Chart.yaml.
var chartVersion = regexp.MustCompile(`(?m)^(version|appVersion): .*$`)

// WriteBundle writes, as dir/file, a bundle of the embedded chart at add-on version version
// (the build's own when empty), with small synthetic images, and returns its manifest: the
// bundles a server's bundle directory holds.
func WriteBundle(t testing.TB, dir, file, version string) bundle.Manifest {
	t.Helper()
	if version == "" {
		src, m := testbundle.Write(t, 1024)
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o600); err != nil {
			t.Fatal(err)
		}
		return m
	}
	c := Chart(t, version)
	lay := filepath.Join(t.TempDir(), "layout")
	if err := bundletest.WriteLayout(lay, 1024, bundletest.ChartRefs(version)...); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	m, err := bundle.Create(context.Background(), bundle.CreateOptions{Chart: c, Layout: lay}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, file), buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return m
}

// Chart packages the embedded chart at add-on version version: a copy whose Chart.yaml names
// it as its version and appVersion.
func Chart(t testing.TB, version string) bundle.Chart {
	t.Helper()
	embedded, err := charts.Kruise()
	if err != nil {
		t.Fatal(err)
	}
	chart := fstest.MapFS{}
	err = fs.WalkDir(embedded, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(embedded, p)
		if p == "Chart.yaml" {
			data = chartVersion.ReplaceAll(data, []byte(`$1: "`+version+`"`))
		}
		chart[p] = &fstest.MapFile{Data: data, Mode: 0o644}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := bundle.PackageChart(chart)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
