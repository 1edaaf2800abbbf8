package bundle

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kruise-addon/kruise-addon/charts"
	"github.com/kruise-addon/kruise-addon/installer/bundle/bundletest"
)

func kruiseChart(t testing.TB) Chart {
	t.Helper()
	fsys, err := charts.Kruise()
	if err != nil {
		t.Fatal(err)
	}
	c, err := PackageChart(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// writeBundle creates a bundle of the add-on's chart from a test layout and returns its path.
func writeBundle(t testing.TB, c Chart, layoutDir string) (string, Manifest) {
	t.Helper()
	var buf bytes.Buffer
	m, err := Create(context.Background(), CreateOptions{Chart: c, Layout: layoutDir}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "bundle.tar")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, m
}

func testLayout(t testing.TB, c Chart, extra ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "layout")
	refs := append(bundletest.ChartRefs(c.Metadata.AppVersion), extra...)
	if err := bundletest.WriteLayout(dir, 4096, refs...); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestChartImages(t *testing.T) {
	img := func(repo, tag string) map[string]any {
		return map[string]any{"image": map[string]any{"registry": "r.example", "repository": repo, "tag": tag}}
	}
	cases := map[string]struct {
		values  map[string]any
		server  bool
		want    []wanted
		wantErr string
	}{
		"with the server, the console API's image is a last one, its empty tag the appVersion": {
			values: map[string]any{"manager": img("a/manager", ""), "daemon": img("a/daemon", ""), "hook": img("", ""), "server": img("a/addon", "")},
			server: true,
			want: []wanted{
				{roles: []Role{RoleManager, RoleHook}, repository: "a/manager", tag: "1.2.0"},
				{roles: []Role{RoleDaemon}, repository: "a/daemon", tag: "1.2.0"},
				{roles: []Role{RoleServer}, repository: "a/addon", tag: "1.2.0"},
			},
		},
		"without the server, its image is not listed": {
			values: map[string]any{"manager": img("a/manager", ""), "daemon": img("a/daemon", ""), "hook": img("", ""), "server": img("a/addon", "")},
			want: []wanted{
				{roles: []Role{RoleManager, RoleHook}, repository: "a/manager", tag: "1.2.0"},
				{roles: []Role{RoleDaemon}, repository: "a/daemon", tag: "1.2.0"},
			},
		},
		"the hook runs the manager's image when its fields are empty, so it is listed once with both roles": {
			values: map[string]any{"manager": img("a/manager", ""), "daemon": img("a/daemon", ""), "hook": img("", "")},
			want: []wanted{
				{roles: []Role{RoleManager, RoleHook}, repository: "a/manager", tag: "1.2.0"},
				{roles: []Role{RoleDaemon}, repository: "a/daemon", tag: "1.2.0"},
			},
		},
		"a hook image of its own is a third image": {
			values: map[string]any{"manager": img("a/manager", "v1"), "daemon": img("a/daemon", "v1"), "hook": img("a/hook", "")},
			want: []wanted{
				{roles: []Role{RoleManager}, repository: "a/manager", tag: "v1"},
				{roles: []Role{RoleDaemon}, repository: "a/daemon", tag: "v1"},
				{roles: []Role{RoleHook}, repository: "a/hook", tag: "v1"},
			},
		},
		"a missing repository is an error naming the value": {
			values:  map[string]any{"manager": img("a/manager", ""), "daemon": img("", "")},
			wantErr: "daemon.image.repository",
		},
		"a tag pinned to a digest cannot be found in a layout by name": {
			values:  map[string]any{"manager": img("a/manager", "sha256:abc"), "daemon": img("a/daemon", "")},
			wantErr: "manager.image.tag to a digest",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := chartImages(tc.values, "1.2.0", tc.server)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(wanted{})); d != "" {
				t.Errorf("images (-want +got):\n%s", d)
			}
		})
	}
}

func TestPackageChartIsDeterministic(t *testing.T) {
	a, b := kruiseChart(t), kruiseChart(t)
	if !bytes.Equal(a.Data, b.Data) {
		t.Fatalf("two packages of one chart differ: %s vs %s", a.Digest(), b.Digest())
	}
	if a.FileName() != "kruise-"+a.Metadata.Version+".tgz" {
		t.Errorf("package name %s", a.FileName())
	}
}

func TestCreate(t *testing.T) {
	c := kruiseChart(t)
	dir := testLayout(t, c, "e2e/pause:1.0")

	t.Run("the same chart and images give byte-identical bundles", func(t *testing.T) {
		var one, two bytes.Buffer
		if _, err := Create(context.Background(), CreateOptions{Chart: c, Layout: dir}, &one); err != nil {
			t.Fatal(err)
		}
		if _, err := Create(context.Background(), CreateOptions{Chart: c, Layout: dir}, &two); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(one.Bytes(), two.Bytes()) {
			t.Fatalf("two bundles of the same inputs differ (%d and %d bytes)", one.Len(), two.Len())
		}
	})

	t.Run("the bundle holds the chart and exactly the images the chart references, by digest", func(t *testing.T) {
		p, m := writeBundle(t, c, dir)
		b, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		var got []string
		for _, img := range b.Manifest.Images {
			got = append(got, img.Ref()+" "+joinRoles(img.Roles)+" "+strings.Join(img.Platforms, ","))
		}
		want := []string{
			"kruise-addon/kruise-manager:" + c.Metadata.AppVersion + " manager, hook linux/amd64",
			"kruise-addon/kruise-daemon:" + c.Metadata.AppVersion + " daemon linux/amd64",
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("bundle images (-want +got):\n%s", d)
		}
		if d := cmp.Diff(m, b.Manifest); d != "" {
			t.Errorf("manifest read back (-created +read):\n%s", d)
		}
		if !bytes.Equal(b.ChartData, c.Data) || b.Chart.Metadata.Version != c.Metadata.Version {
			t.Errorf("chart read back differs from the packaged one")
		}
		lp, err := b.Layout()
		if err != nil {
			t.Fatal(err)
		}
		idx, err := lp.ImageIndex()
		if err != nil {
			t.Fatal(err)
		}
		im, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		var digests []string
		for _, d := range im.Manifests {
			digests = append(digests, d.Annotations[refNameAnnotation]+"@"+d.Digest.String())
		}
		var wantDigests []string
		for _, img := range m.Images {
			wantDigests = append(wantDigests, img.Ref()+"@"+img.Digest)
		}
		if d := cmp.Diff(wantDigests, digests); d != "" {
			t.Errorf("layout in the bundle (-manifest +layout):\n%s", d)
		}
	})

	t.Run("a layout without the daemon image is refused, naming it", func(t *testing.T) {
		only := filepath.Join(t.TempDir(), "layout")
		if err := bundletest.WriteLayout(only, 64, "kruise-addon/kruise-manager:"+c.Metadata.AppVersion); err != nil {
			t.Fatal(err)
		}
		_, err := Create(context.Background(), CreateOptions{Chart: c, Layout: only}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "kruise-addon/kruise-daemon:"+c.Metadata.AppVersion+" (daemon)") {
			t.Fatalf("error %v, want one naming the daemon image", err)
		}
	})

	t.Run("a file that is not a bundle is refused", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "x.tar")
		if err := os.WriteFile(p, []byte("not a tar"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(p); err == nil {
			t.Fatal("read a non-bundle without error")
		}
	})
}

func TestPushAndVerify(t *testing.T) {
	c := kruiseChart(t)
	p, m := writeBundle(t, c, testLayout(t, c))
	b, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()

	cases := map[string]struct {
		user, pass string
		reg        func(host string) Registry
	}{
		"a registry without auth":                       {reg: func(h string) Registry { return Registry{Host: h} }},
		"a registry with basic auth, given credentials": {user: "ci", pass: "s3cret", reg: func(h string) Registry { return Registry{Host: h, Username: "ci", Password: "s3cret"} }},
		"a path prefix under the host":                  {reg: func(h string) Registry { return Registry{Host: h + "/mirror/kruise"} }},
	}
	for tn, tc := range cases {
		t.Run(tn, func(t *testing.T) {
			host := bundletest.Registry(t, tc.user, tc.pass)
			r := tc.reg(host)

			err := Verify(ctx, m, r)
			var missing *MissingError
			if !errors.As(err, &missing) {
				t.Fatalf("verify against an empty registry: %v, want a MissingError", err)
			}
			var want []string
			for _, img := range sortedImages(m) {
				want = append(want, img.Repository+"@"+img.Digest+" ("+joinRoles(img.Roles)+")")
			}
			if d := cmp.Diff(want, missing.Images); d != "" {
				t.Errorf("missing images (-want +got):\n%s", d)
			}

			pushed, err := Push(ctx, b, PushOptions{Registry: r, ChartRepository: "charts"})
			if err != nil {
				t.Fatalf("push: %v", err)
			}
			if err := Verify(ctx, m, r); err != nil {
				t.Fatalf("verify after push: %v", err)
			}
			if pushed.Chart != "oci://"+r.Host+"/charts/kruise" {
				t.Errorf("chart pushed to %s", pushed.Chart)
			}
			// The images are there under their tags too, at the bundle's digests.
			for _, img := range m.Images {
				ref, err := name.ParseReference(r.Host + "/" + img.Ref())
				if err != nil {
					t.Fatal(err)
				}
				ropts, done := r.client(ctx)
				desc, err := remote.Head(ref, ropts...)
				done()
				if err != nil {
					t.Fatalf("head %s: %v", ref, err)
				}
				if desc.Digest.String() != img.Digest {
					t.Errorf("%s has digest %s, the bundle %s", ref, desc.Digest, img.Digest)
				}
			}
		})
	}

	t.Run("wrong credentials are an error, not a missing image", func(t *testing.T) {
		host := bundletest.Registry(t, "ci", "s3cret")
		err := Verify(ctx, m, Registry{Host: host, Username: "ci", Password: "wrong"})
		var missing *MissingError
		if err == nil || errors.As(err, &missing) {
			t.Fatalf("verify with wrong credentials: %v, want an authentication error", err)
		}
		if _, err := Push(ctx, b, PushOptions{Registry: Registry{Host: host}}); err == nil {
			t.Fatal("push without credentials to a registry that requires them succeeded")
		}
	})
}

// A multi-platform build's layout holds an image index per image: the bundle keeps the index,
// names its platforms, and push and verify treat it as one digest.
func TestMultiPlatformImages(t *testing.T) {
	c := kruiseChart(t)
	dir := filepath.Join(t.TempDir(), "layout")
	platforms := []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64", Variant: "v8"}}
	if err := bundletest.WriteIndexLayout(dir, 256, platforms, bundletest.ChartRefs(c.Metadata.AppVersion)...); err != nil {
		t.Fatal(err)
	}
	p, m := writeBundle(t, c, dir)
	var got []string
	for _, img := range m.Images {
		got = append(got, img.Repository+" "+img.MediaType+" "+strings.Join(img.Platforms, ","))
	}
	want := []string{
		"kruise-addon/kruise-manager application/vnd.oci.image.index.v1+json linux/amd64,linux/arm64/v8",
		"kruise-addon/kruise-daemon application/vnd.oci.image.index.v1+json linux/amd64,linux/arm64/v8",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("bundle images (-want +got):\n%s", d)
	}
	b, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r := Registry{Host: bundletest.Registry(t, "", "")}
	if _, err := Push(context.Background(), b, PushOptions{Registry: r}); err != nil {
		t.Fatalf("push: %v", err)
	}
	if err := Verify(context.Background(), m, r); err != nil {
		t.Fatalf("verify after push: %v", err)
	}
	for _, img := range m.Images {
		ref, err := name.ParseReference(r.Host + "/" + img.Repository + "@" + img.Digest)
		if err != nil {
			t.Fatal(err)
		}
		ii, err := remote.Index(ref)
		if err != nil {
			t.Fatalf("index %s: %v", ref, err)
		}
		im, err := ii.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		if len(im.Manifests) != len(platforms) {
			t.Errorf("%s in the registry lists %d platforms, want %d", ref, len(im.Manifests), len(platforms))
		}
	}
}

func TestRegistryValidate(t *testing.T) {
	cases := map[string]struct {
		r    Registry
		want string
	}{
		"a host and port is valid":                     {r: Registry{Host: "127.0.0.1:5000"}},
		"a host with a path is valid":                  {r: Registry{Host: "registry.internal/kruise"}},
		"an empty host is required":                    {r: Registry{}, want: "registry.host: Required value"},
		"a scheme is refused":                          {r: Registry{Host: "https://registry.internal"}, want: "without a scheme"},
		"an upper-case path is refused":                {r: Registry{Host: "registry.internal/Kruise"}, want: "lower-case"},
		"a password without a username is input error": {r: Registry{Host: "r.internal", Password: "x"}, want: "registry.username"},
	}
	for tn, tc := range cases {
		t.Run(tn, func(t *testing.T) {
			errs := tc.r.Validate(field.NewPath("registry"))
			if tc.want == "" {
				if len(errs) > 0 {
					t.Fatalf("errors %v, want none", errs)
				}
				return
			}
			if !strings.Contains(errs.ToAggregate().Error(), tc.want) {
				t.Fatalf("errors %v, want one containing %q", errs, tc.want)
			}
		})
	}
}

func TestWriteRepository(t *testing.T) {
	c := kruiseChart(t)
	dir := t.TempDir()
	idx, err := WriteRepository(dir, c, "")
	if err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteRepository(dir, c, ""); err != nil {
		t.Fatal(err)
	}
	second, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("the same chart written twice gives different index files:\n%s\n---\n%s", first, second)
	}
	for _, want := range []string{"kruise-" + c.Metadata.Version + ".tgz", "digest: " + c.Digest(), "version: " + c.Metadata.Version} {
		if !strings.Contains(string(first), want) {
			t.Errorf("index.yaml lacks %q:\n%s", want, first)
		}
	}
}
