package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kruise-addon/kruise-addon/installer/bundle"
	"github.com/kruise-addon/kruise-addon/installer/chartsource"
)

// Where an installable chart comes from.
const (
	// SourceChart is the chart built into the server.
	SourceChart = "chart"
	// SourceBundle is an air-gap bundle among those the server was given (serve --bundle-dir).
	SourceBundle = "bundle"
)

// Installable is a version this server has a chart for.
type Installable struct {
	// Version is the add-on version (the chart's appVersion).
	Version string `json:"version"`
	Source  string `json:"source"`
	// Bundle is the bundle's file name in the server's bundle directory, for source bundle: the
	// request's bundle, with a registry that holds its images.
	Bundle string `json:"bundle,omitempty"`
}

// charts are the charts a server installs: its own, and the bundles in its bundle directory.
// A request names a bundle by its file name in that directory, never by a path of its own.
type charts struct {
	// own is the add-on version of the server's chart.
	own string
	// dir is the bundle directory, "" when the server was given none.
	dir string

	mu sync.Mutex
	// read caches each bundle's manifest by file name, size and modification time: reading a
	// bundle reads its whole archive.
	read map[string]bundleEntry
}

type bundleEntry struct {
	size     int64
	modified time.Time
	manifest bundle.Manifest
	err      error
}

// newCharts checks the bundle directory, when there is one.
func newCharts(own, dir string) (*charts, error) {
	if dir != "" {
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("bundle directory %q: must be a directory of bundles (kruise-addon bundle create): %v", dir, err)
		}
	}
	return &charts{own: own, dir: dir, read: map[string]bundleEntry{}}, nil
}

// bundlePath is where the request's bundle is, when it is a file of the bundle directory: a
// name with no directory part, not hidden, that resolves inside the directory (a symlink out
// of it is refused).
func (c *charts) bundlePath(p *field.Path, name string) (string, *field.Error) {
	if c.dir == "" {
		return "", field.Forbidden(p, "this server was given no bundles; start it with a bundle directory (serve --bundle-dir) to install from one")
	}
	if name != filepath.Base(name) || strings.HasPrefix(name, ".") || strings.ContainsAny(name, `/\`) {
		return "", field.Invalid(p, name, "must be the file name of a bundle in the server's bundle directory, not a path; GET /v1/versions lists them")
	}
	root, err := os.OpenRoot(c.dir)
	if err != nil {
		return "", field.InternalError(p, fmt.Errorf("bundle directory: %w", err))
	}
	defer root.Close()
	fi, err := root.Stat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return "", field.NotFound(p, name)
	}
	return filepath.Join(c.dir, name), nil
}

// manifest reads a bundle's manifest, once per version of its file.
func (c *charts) manifest(name string) (bundle.Manifest, error) {
	path := filepath.Join(c.dir, name)
	fi, err := os.Stat(path)
	if err != nil {
		return bundle.Manifest{}, err
	}
	c.mu.Lock()
	e, ok := c.read[name]
	c.mu.Unlock()
	if ok && e.size == fi.Size() && e.modified.Equal(fi.ModTime()) {
		return e.manifest, e.err
	}
	e = bundleEntry{size: fi.Size(), modified: fi.ModTime()}
	if b, err := bundle.Read(path); err != nil {
		e.err = err
	} else {
		e.manifest = b.Manifest
		_ = b.Close()
	}
	c.mu.Lock()
	c.read[name] = e
	c.mu.Unlock()
	return e.manifest, e.err
}

// installable lists the versions this server has a chart for: its own first, then each bundle
// of the directory by file name. A file that is not a bundle is left out.
func (c *charts) installable() []Installable {
	out := []Installable{{Version: c.own, Source: SourceChart}}
	if c.dir == "" {
		return out
	}
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return out
	}
	sort.Slice(entries, func(a, b int) bool { return entries[a].Name() < entries[b].Name() })
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		m, err := c.manifest(e.Name())
		if err != nil {
			continue
		}
		out = append(out, Installable{Version: m.Chart.AppVersion, Source: SourceBundle, Bundle: e.Name()})
	}
	return out
}

// choose decides the chart of a request from its version and bundle: the bundle's (whose
// version must then be the one asked, if one is), else the server's own for its version or
// none, else the first bundle of that version. It returns the bundle's path ("" for the
// server's own chart) and the add-on version chosen.
func (c *charts) choose(version, bundleName string) (string, string, field.ErrorList) {
	vp, bp := field.NewPath("version"), field.NewPath("bundle")
	if bundleName != "" {
		path, ferr := c.bundlePath(bp, bundleName)
		if ferr != nil {
			return "", "", field.ErrorList{ferr}
		}
		m, err := c.manifest(bundleName)
		if err != nil {
			return "", "", field.ErrorList{field.Invalid(bp, bundleName, fmt.Sprintf("is not a bundle: %v", err))}
		}
		if version != "" && version != m.Chart.AppVersion {
			return "", "", field.ErrorList{field.Invalid(vp, version, fmt.Sprintf("bundle %s carries add-on %s; give that version or none", bundleName, m.Chart.AppVersion))}
		}
		return path, m.Chart.AppVersion, nil
	}
	if version == "" || version == c.own {
		return "", c.own, nil
	}
	all := c.installable()
	for _, i := range all {
		if i.Version == version && i.Source == SourceBundle {
			return filepath.Join(c.dir, i.Bundle), version, nil
		}
	}
	versions := make([]string, 0, len(all))
	for _, i := range all {
		versions = append(versions, i.Version)
	}
	return "", "", field.ErrorList{field.NotSupported(vp, version, versions)}
}

// schema is the values schema of version's chart.
func (c *charts) schema(version string) ([]byte, error) {
	path, _, errs := c.choose(version, "")
	if len(errs) > 0 {
		return nil, &fs.PathError{Op: "chart", Path: version, Err: fs.ErrNotExist}
	}
	if path == "" {
		ch, err := chartsource.Load("")
		if err != nil {
			return nil, err
		}
		return ch.Schema, nil
	}
	b, err := bundle.Read(path)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	if b.Chart == nil {
		return nil, errors.New("bundle without a chart")
	}
	return b.Chart.Schema, nil
}
