package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/ignore"
	"helm.sh/helm/v3/pkg/repo"
)

// epoch is the modification time of every entry this package writes, so that the same inputs
// give the same bytes.
var epoch = time.Unix(0, 0).UTC()

// Chart is a packaged chart: the .tgz Helm reads, and its metadata.
type Chart struct {
	Metadata *chart.Metadata
	// Data is the .tgz: entries sorted, mtimes fixed, no owner names, no gzip timestamp.
	Data []byte
}

// FileName is the package's name as Helm writes it: <name>-<version>.tgz.
func (c Chart) FileName() string { return c.Metadata.Name + "-" + c.Metadata.Version + ".tgz" }

// Digest is the sha256 of the package, as Helm's index.yaml records it.
func (c Chart) Digest() string {
	sum := sha256.Sum256(c.Data)
	return hex.EncodeToString(sum[:])
}

// PackageChart packages the chart whose Chart.yaml is at the root of fsys, leaving out what its
// .helmignore names, as `helm package` would, but deterministically: Helm stamps every entry
// with the current time, so two of its packages of one chart never have the same digest.
func PackageChart(fsys fs.FS) (Chart, error) {
	rules := ignore.Empty()
	if b, err := fs.ReadFile(fsys, ".helmignore"); err == nil {
		if rules, err = ignore.Parse(bytes.NewReader(b)); err != nil {
			return Chart{}, fmt.Errorf("chart .helmignore: %w", err)
		}
	}
	rules.AddDefaults()
	type entry struct {
		name string
		data []byte
	}
	var files []entry
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if rules.Ignore(p, fi) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files = append(files, entry{name: p, data: data})
		return nil
	})
	if err != nil {
		return Chart{}, fmt.Errorf("read chart: %w", err)
	}
	sort.Slice(files, func(a, b int) bool { return files[a].name < files[b].name })
	lf := make([]*loader.BufferedFile, 0, len(files))
	for _, f := range files {
		lf = append(lf, &loader.BufferedFile{Name: f.name, Data: f.data})
	}
	ch, err := loader.LoadFiles(lf)
	if err != nil {
		return Chart{}, fmt.Errorf("load chart: %w", err)
	}
	if err := ch.Validate(); err != nil {
		return Chart{}, fmt.Errorf("chart %s: %w", ch.Name(), err)
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return Chart{}, err
	}
	tw := tar.NewWriter(zw)
	for _, f := range files {
		h := &tar.Header{Name: path.Join(ch.Name(), f.name), Typeflag: tar.TypeReg, Mode: 0o644,
			Size: int64(len(f.data)), ModTime: epoch, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return Chart{}, fmt.Errorf("package %s: %w", f.name, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return Chart{}, fmt.Errorf("package %s: %w", f.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return Chart{}, err
	}
	if err := zw.Close(); err != nil {
		return Chart{}, err
	}
	return Chart{Metadata: ch.Metadata, Data: buf.Bytes()}, nil
}

// WriteRepository writes a static Helm repository into dir: the packaged chart and an
// index.yaml listing it, so that `helm repo add <name> <url>` and `helm install --version`
// work from any file server that serves dir at url. A chart already in dir's index.yaml
// (another version) is kept. baseURL may be empty: the index then names the package relative
// to the repository, which Helm resolves against the URL it was added with.
func WriteRepository(dir string, c Chart, baseURL string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("chart repository %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, c.FileName()), c.Data, 0o644); err != nil {
		return "", fmt.Errorf("write chart: %w", err)
	}
	idxPath := filepath.Join(dir, "index.yaml")
	idx := repo.NewIndexFile()
	if _, err := os.Stat(idxPath); err == nil {
		if idx, err = repo.LoadIndexFile(idxPath); err != nil {
			return "", fmt.Errorf("read %s: %w", idxPath, err)
		}
	}
	if idx.Has(c.Metadata.Name, c.Metadata.Version) {
		// Same version again: replace its entry (the digest may differ).
		versions := idx.Entries[c.Metadata.Name]
		kept := versions[:0]
		for _, v := range versions {
			if v.Version != c.Metadata.Version {
				kept = append(kept, v)
			}
		}
		idx.Entries[c.Metadata.Name] = kept
	}
	if err := idx.MustAdd(c.Metadata, c.FileName(), baseURL, c.Digest()); err != nil {
		return "", fmt.Errorf("index %s: %w", c.FileName(), err)
	}
	// Fixed times, so that the same chart gives the same index.
	for _, v := range idx.Entries[c.Metadata.Name] {
		if v.Version == c.Metadata.Version {
			v.Created = epoch
		}
	}
	idx.Generated = epoch
	idx.SortEntries()
	if err := idx.WriteFile(idxPath, 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", idxPath, err)
	}
	return idxPath, nil
}
