package server

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kruise-addon/kruise-addon/installer/bundle"
	"github.com/kruise-addon/kruise-addon/installer/chartsource"
	"github.com/kruise-addon/kruise-addon/installer/server/servertest"
)

// bundleFixture is a server whose bundle directory holds current.tar (the build's version) and
// old.tar (1.1.42), beside a bundle outside it that link.tar points at.
func bundleFixture(t *testing.T, with ...func(*Options)) *fixture {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "bundles")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	servertest.WriteBundle(t, dir, "current.tar", "")
	servertest.WriteBundle(t, dir, "old.tar", "1.1.42")
	servertest.WriteBundle(t, root, "outside.tar", "")
	if err := os.Symlink(filepath.Join(root, "outside.tar"), filepath.Join(dir, "link.tar")); err != nil {
		t.Fatal(err)
	}
	return fixtureWith(t, func(o *Options) {
		o.BundleDir = dir
		for _, w := range with {
			w(o)
		}
	})
}

// With serve --bundle-key, an install from a bundle of the directory carries the key, so the
// installer refuses a bundle not signed for it before it reads its chart; other installs carry
// none. A key the bundles cannot be checked with stops the server at start.
func TestABundleKeyGoesWithEveryInstallFromABundle(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	key := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	f := bundleFixture(t, func(o *Options) { o.BundleKey = key })
	mirror := &RegistryRequest{Host: "127.0.0.1:5000"}
	for name, tc := range map[string]struct {
		req  ApplyRequest
		want string
	}{
		"an install from a bundle carries the key":          {ApplyRequest{Bundle: "current.tar", Registry: mirror}, key},
		"an install of the server's own chart carries none": {ApplyRequest{Values: map[string]any{"imageRegistry": "registry.example.com"}}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			o, err := tc.req.options(context.Background(), f.srv.charts)
			if err != nil {
				t.Fatal(err)
			}
			if o.BundleKey != tc.want {
				t.Errorf("BundleKey %q, want %q", o.BundleKey, tc.want)
			}
		})
	}
	o, _ := testOptions(t, defaultAccess())
	o.BundleDir, o.BundleKey = t.TempDir(), "not a key"
	if _, err := New(o); err == nil || !strings.Contains(err.Error(), "bundle key: public key") {
		t.Errorf("New with a bad key: %v, want it refused naming the bundle key", err)
	}
}

func TestARequestsBundleIsAFileOfTheServersBundleDirectoryAndItsVersionOneItHasAChartFor(t *testing.T) {
	f := bundleFixture(t)
	bare := newFixture(t, defaultAccess(), nil)
	mirror := map[string]any{"host": "127.0.0.1:5000"}
	for _, tc := range []struct {
		name    string
		f       *fixture
		body    map[string]any
		wantErr string
	}{
		{"a path out of the bundle directory is refused naming bundle", f, map[string]any{"bundle": "../outside.tar", "registry": mirror}, `bundle: Invalid value: "../outside.tar": must be the file name of a bundle`},
		{"an absolute path is refused naming bundle", f, map[string]any{"bundle": "/etc/passwd", "registry": mirror}, `bundle: Invalid value: "/etc/passwd": must be the file name of a bundle`},
		{"a symlink out of the bundle directory is not found in it", f, map[string]any{"bundle": "link.tar", "registry": mirror}, `bundle: Not found: "link.tar"`},
		{"a file the directory lacks is not found in it", f, map[string]any{"bundle": "none.tar", "registry": mirror}, `bundle: Not found: "none.tar"`},
		{"a server given no bundles refuses one", bare, map[string]any{"bundle": "current.tar", "registry": mirror}, "bundle: Forbidden: this server was given no bundles"},
		{"a bundle without its mirror is refused naming registry", f, map[string]any{"bundle": "current.tar"}, "registry: Required value"},
		{"a mirror without a bundle is refused naming bundle", f, map[string]any{"registry": mirror}, "bundle: Required value"},
		{"a mirror with a scheme is refused naming registry.host", f, map[string]any{"bundle": "current.tar", "registry": map[string]any{"host": "https://mirror"}}, "registry.host: Invalid value"},
		{"a version with no chart here is refused, listing those there are", f, map[string]any{"version": "1.1.36"}, `version: Unsupported value: "1.1.36": supported values: "1.2.0", "1.2.0", "1.1.42"`},
		{"a version other than its bundle's is refused naming version", f, map[string]any{"bundle": "old.tar", "version": "1.2.0", "registry": mirror}, "bundle old.tar carries add-on 1.1.42"},
		{"a bundle's version needs its mirror", f, map[string]any{"version": "1.1.42"}, "registry: Required value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, action := range []string{"install", "upgrade"} {
				status, body := tc.f.call(t, nil, "POST", "/v1/clusters/prod/addon/"+action, operatorToken, tc.body)
				var e ErrorBody
				_ = json.Unmarshal(body, &e)
				if status != http.StatusBadRequest || e.Reason != ReasonBadInput || !strings.Contains(e.Error, tc.wantErr) {
					t.Errorf("%s: status %d %s, want 400 BadInput with %q", action, status, body, tc.wantErr)
				}
			}
		})
	}
}

func TestVersionsListEveryVersionTheServerHasAChartFor(t *testing.T) {
	f := bundleFixture(t)
	wantInstallable(t, f, []Installable{
		{Version: "1.2.0", Source: SourceChart},
		{Version: "1.2.0", Source: SourceBundle, Bundle: "current.tar"},
		{Version: "1.1.42", Source: SourceBundle, Bundle: "old.tar"},
	})
	if status, _ := f.call(t, nil, "GET", "/v1/versions/1.1.42/schema", readerToken, nil); status != http.StatusOK {
		t.Errorf("the schema of a bundle's version: status %d", status)
	}
}

// repoFixture is a server whose chart repository (served over HTTP) holds the chart at
// 1.1.42 and 1.1.36.
func repoFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	for _, v := range []string{"1.1.42", "1.1.36"} {
		if _, err := bundle.WriteRepository(dir, servertest.Chart(t, v), ""); err != nil {
			t.Fatal(err)
		}
	}
	repo := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(repo.Close)
	return fixtureWith(t, func(o *Options) { o.ChartRepository = repo.URL })
}

func TestAVersionOfTheChartRepositoryIsInstallableFromItsChart(t *testing.T) {
	f := repoFixture(t)
	wantInstallable(t, f, []Installable{
		{Version: "1.2.0", Source: SourceChart},
		{Version: "1.1.42", Source: SourceRepository, Chart: "1.1.42"},
		{Version: "1.1.36", Source: SourceRepository, Chart: "1.1.36"},
	})
	for _, tc := range []struct {
		name        string
		version     string
		wantVersion string
	}{
		{"the server's own version installs its own chart", "", "1.2.0"},
		{"a repository's version installs the repository's chart of it", "1.1.36", "1.1.36"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ApplyRequest{Version: tc.version, Values: map[string]any{"imageRegistry": "registry.example.com"}}.options(context.Background(), f.srv.charts)
			if err != nil {
				t.Fatal(err)
			}
			ch, err := chartsource.Load(o.ChartPath)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantVersion, ch.Metadata.AppVersion); diff != "" {
				t.Errorf("the chart's appVersion (-want +got):\n%s", diff)
			}
			if err := checkOffline(o); err != nil {
				t.Errorf("the chart does not render with the request: %v", err)
			}
		})
	}
	status, body := f.call(t, nil, "POST", "/v1/clusters/prod/addon/install", operatorToken, map[string]any{"version": "1.1.35"})
	if status != http.StatusBadRequest || !strings.Contains(string(body), `supported values: \"1.2.0\", \"1.1.42\", \"1.1.36\"`) {
		t.Errorf("a version neither the server nor its repository has: %d %s", status, body)
	}
}

// wantInstallable checks the installable versions f's server lists.
func wantInstallable(t *testing.T, f *fixture, want []Installable) {
	t.Helper()
	_, body := f.call(t, nil, "GET", "/v1/versions", readerToken, nil)
	var v VersionsResponse
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, v.InstallableVersions); diff != "" {
		t.Errorf("installableVersions (-want +got):\n%s", diff)
	}
}

func TestAnUnreadableChartRepositoryIsTheServersErrorNotTheRequests(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	f := fixtureWith(t, func(o *Options) { o.ChartRepository = gone.URL })
	status, body := f.call(t, nil, "POST", "/v1/clusters/prod/addon/install", operatorToken, map[string]any{"version": "1.1.36"})
	var e ErrorBody
	_ = json.Unmarshal(body, &e)
	// Unreachable, as a cluster can be: 503 Unavailable, to retry, never 400.
	if status != http.StatusServiceUnavailable || e.Reason != ReasonUnavailable || !strings.Contains(e.Error, "the chart repository's versions are not known") {
		t.Errorf("status %d %s, want 503 Unavailable saying the repository could not be read", status, body)
	}
	// The server's own version needs no repository.
	wantInstallable(t, f, []Installable{{Version: "1.2.0", Source: SourceChart}})
}
