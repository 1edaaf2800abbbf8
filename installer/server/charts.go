package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/repo"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/kruise-addon/kruise-addon/installer/bundle"
	"github.com/kruise-addon/kruise-addon/installer/chartsource"
)

// Where an installable chart comes from.
const (
	// SourceChart is the chart built into the server.
	SourceChart = "chart"
	// SourceBundle is an air-gap bundle among those the server was given (serve --bundle-dir).
	SourceBundle = "bundle"
	// SourceRepository is the Helm chart repository the server was given (serve --chart-repo).
	SourceRepository = "repository"
)

// chartName is the add-on's chart's name, in a chart repository too.
const chartName = "kruise"

// repoTimeout bounds a read of the chart repository: its index, or one chart.
const repoTimeout = 30 * time.Second

// Installable is a version this server has a chart for.
type Installable struct {
	// Version is the add-on version (the chart's appVersion).
	Version string `json:"version"`
	Source  string `json:"source"`
	// Bundle is the bundle's file name in the server's bundle directory, for source bundle: the
	// request's bundle, with a registry that holds its images.
	Bundle string `json:"bundle,omitempty"`
	// Chart is the chart's version in the chart repository, for source repository.
	Chart string `json:"chart,omitempty"`
}

// charts are the charts a server installs: its own, and the bundles in its bundle directory.
// A request names a bundle by its file name in that directory, never by a path of its own.
type charts struct {
	// own is the add-on version of the server's chart.
	own string
	// dir is the bundle directory, "" when the server was given none.
	dir string
	// bundleKey is the PEM public key every bundle of dir must be signed for, "" for none.
	bundleKey string
	// repo is the chart repository's URL, "" when the server was given none; fetched holds
	// the charts read from it.
	repo    string
	fetched string

	mu sync.Mutex
	// read caches each bundle's manifest by file name, size and modification time: reading a
	// bundle reads its whole archive.
	read map[string]bundleEntry
}

type bundleEntry struct {
	size     int64
	modified time.Time
	manifest bundle.Manifest
	// schema is the values schema of the bundle's chart.
	schema []byte
	err    error
}

// newCharts checks the bundle directory and the chart repository's URL, when there are.
func newCharts(own, dir, repository string) (*charts, error) {
	if dir != "" {
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("bundle directory %q: must be a directory of bundles (kruise-addon bundle create): %v", dir, err)
		}
	}
	c := &charts{own: own, dir: dir, read: map[string]bundleEntry{}}
	if repository != "" {
		u, err := url.Parse(repository)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("chart repository %q: must be the http(s) URL of a Helm repository (its index.yaml is under it)", repository)
		}
		if c.fetched, err = os.MkdirTemp("", "kruise-addon-charts-"); err != nil {
			return nil, fmt.Errorf("chart repository: %w", err)
		}
		c.repo = strings.TrimSuffix(repository, "/") + "/"
	}
	return c, nil
}

// repoIndex reads the chart repository's index.
func (c *charts) repoIndex(ctx context.Context) (*repo.IndexFile, error) {
	data, err := c.repoGet(ctx, "index.yaml")
	if err != nil {
		return nil, err
	}
	var idx repo.IndexFile
	if err := yaml.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("chart repository %s: index.yaml: %w", c.repo, err)
	}
	idx.SortEntries()
	return &idx, nil
}

// repoGet reads ref, relative to the repository's URL (or absolute).
func (c *charts) repoGet(ctx context.Context, ref string) ([]byte, error) {
	base, _ := url.Parse(c.repo)
	u, err := base.Parse(ref)
	if err != nil {
		return nil, fmt.Errorf("chart repository %s: %q: %w", c.repo, ref, err)
	}
	ctx, cancel := context.WithTimeout(ctx, repoTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("chart repository %s: %w", c.repo, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("chart repository %s: GET %s: %s", c.repo, u, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, maxChartBytes))
}

// maxChartBytes bounds what is read of a chart repository's index or chart.
const maxChartBytes = 64 << 20

// repoChart fetches the repository's chart of chart version chartVersion into the server's own
// directory, its digest checked against the index's, and returns its path.
func (c *charts) repoChart(ctx context.Context, chartVersion string) (string, error) {
	idx, err := c.repoIndex(ctx)
	if err != nil {
		return "", err
	}
	v, err := idx.Get(chartName, chartVersion)
	if err != nil {
		return "", fmt.Errorf("chart repository %s: %s %s: %w", c.repo, chartName, chartVersion, err)
	}
	if len(v.URLs) == 0 {
		return "", fmt.Errorf("chart repository %s: %s %s has no URL", c.repo, v.Name, v.Version)
	}
	data, err := c.repoGet(ctx, v.URLs[0])
	if err != nil {
		return "", err
	}
	if sum := sha256.Sum256(data); v.Digest != "" && hex.EncodeToString(sum[:]) != v.Digest {
		return "", fmt.Errorf("chart repository %s: %s %s: digest sha256:%x, the index says %s", c.repo, v.Name, v.Version, sum, v.Digest)
	}
	path := filepath.Join(c.fetched, fmt.Sprintf("%s-%s.tgz", v.Name, v.Version))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("chart repository: %w", err)
	}
	return path, nil
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
	e, err := c.entry(name)
	if err != nil {
		return bundle.Manifest{}, err
	}
	return e.manifest, e.err
}

// entry reads a bundle of the directory, once per version of its file: reading verifies the
// whole archive.
func (c *charts) entry(name string) (bundleEntry, error) {
	path := filepath.Join(c.dir, name)
	fi, err := os.Stat(path)
	if err != nil {
		return bundleEntry{}, err
	}
	c.mu.Lock()
	e, ok := c.read[name]
	c.mu.Unlock()
	if ok && e.size == fi.Size() && e.modified.Equal(fi.ModTime()) {
		return e, nil
	}
	e = bundleEntry{size: fi.Size(), modified: fi.ModTime()}
	// Read refuses a bundle that lacks its chart, so a read bundle has one.
	if b, err := bundle.Read(path); err != nil {
		e.err = err
	} else {
		e.manifest, e.schema = b.Manifest, b.Chart.Schema
		_ = b.Close()
	}
	c.mu.Lock()
	c.read[name] = e
	c.mu.Unlock()
	return e, nil
}

// installable lists the versions this server has a chart for: its own first, then each bundle
// of the directory by file name, then the chart repository's, newest first. A file that is not
// a bundle is left out, and so is a repository that cannot be read (its error is returned).
func (c *charts) installable(ctx context.Context) ([]Installable, error) {
	out := []Installable{{Version: c.own, Source: SourceChart}}
	out = append(out, c.bundles()...)
	if c.repo == "" {
		return out, nil
	}
	idx, err := c.repoIndex(ctx)
	if err != nil {
		return out, err
	}
	for _, v := range idx.Entries[chartName] {
		out = append(out, Installable{Version: v.AppVersion, Source: SourceRepository, Chart: v.Version})
	}
	return out, nil
}

// bundles lists the bundle directory's bundles.
func (c *charts) bundles() []Installable {
	var out []Installable
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

// chosen is the chart a request chose.
type chosen struct {
	// bundle is the bundle's path, chartPath a chart fetched from the repository; both are ""
	// for the server's own chart.
	bundle, chartPath string
	version           string
}

// choose decides the chart of a request from its version and bundle: the bundle's (whose
// version must then be the one asked, if one is), else the server's own for its version or
// none, else the first bundle of that version, else the chart repository's. The error is a
// chart repository that could not be read, no fault of the request's.
func (c *charts) choose(ctx context.Context, version, bundleName string) (chosen, field.ErrorList, error) {
	vp, bp := field.NewPath("version"), field.NewPath("bundle")
	if bundleName != "" {
		path, ferr := c.bundlePath(bp, bundleName)
		if ferr != nil {
			return chosen{}, field.ErrorList{ferr}, nil
		}
		m, err := c.manifest(bundleName)
		if err != nil {
			return chosen{}, field.ErrorList{field.Invalid(bp, bundleName, fmt.Sprintf("is not a bundle: %v", err))}, nil
		}
		if version != "" && version != m.Chart.AppVersion {
			return chosen{}, field.ErrorList{field.Invalid(vp, version, fmt.Sprintf("bundle %s carries add-on %s; give that version or none", bundleName, m.Chart.AppVersion))}, nil
		}
		return chosen{bundle: path, version: m.Chart.AppVersion}, nil, nil
	}
	if version == "" || version == c.own {
		return chosen{version: c.own}, nil, nil
	}
	for _, i := range c.bundles() {
		if i.Version == version {
			return chosen{bundle: filepath.Join(c.dir, i.Bundle), version: version}, nil, nil
		}
	}
	all, err := c.installable(ctx)
	if err != nil {
		// Not the request's fault: the repository could not be read.
		return chosen{}, nil, fmt.Errorf("version %s: the chart repository's versions are not known: %w", version, err)
	}
	for _, i := range all {
		if i.Source == SourceRepository && i.Version == version {
			path, err := c.repoChart(ctx, i.Chart)
			if err != nil {
				return chosen{}, nil, err
			}
			return chosen{chartPath: path, version: version}, nil, nil
		}
	}
	versions := make([]string, 0, len(all))
	for _, i := range all {
		versions = append(versions, i.Version)
	}
	return chosen{}, field.ErrorList{field.NotSupported(vp, version, versions)}, nil
}

// schema is the values schema of version's chart.
func (c *charts) schema(ctx context.Context, version string) ([]byte, error) {
	ch, errs, err := c.choose(ctx, version, "")
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	if ch.bundle == "" {
		loaded, err := chartsource.Load(ch.chartPath)
		if err != nil {
			return nil, err
		}
		return loaded.Schema, nil
	}
	// A chosen bundle is a file of the directory: its schema was read with its manifest.
	e, err := c.entry(filepath.Base(ch.bundle))
	if err != nil {
		return nil, err
	}
	return e.schema, e.err
}
