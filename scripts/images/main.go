package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

type options struct {
	root     string
	out      string
	registry string
	tag      string
	only     string
	caFile   string
	// platforms are the linux architectures to build for; more than one makes each image an
	// image index with one image per platform.
	platforms string
}

// spec is one image: which package to build, where the binary goes, who runs it.
type spec struct {
	key     string // selection name for -only
	repo    string
	tag     string // "" = options.tag
	pkg     string
	binary  string
	user    string
	version string // content of /etc/image-version, "" = none
}

func specs(tag string) []spec {
	return []spec{
		{key: "kruise-manager", repo: "kruise-addon/kruise-manager", pkg: "./cmd/kruise-manager", binary: "kruise-manager", user: "65532:65532"},
		{key: "kruise-daemon", repo: "kruise-addon/kruise-daemon", pkg: "./cmd/kruise-daemon", binary: "kruise-daemon", user: "0:0"},
		// The console API (`kruise-addon serve`), for the chart's server.enabled; built on request.
		{key: "kruise-addon", repo: "kruise-addon/kruise-addon", pkg: "./cmd/kruise-addon", binary: "kruise-addon", user: "65532:65532"},
		{key: "pause", repo: "e2e/pause", tag: "1.0", pkg: "./scripts/images/pause", binary: "pause", user: "65535:65535"},
		{key: "sample", repo: "e2e/sample", tag: "v1", pkg: "./scripts/images/pause", binary: "sample", user: "65532:65532", version: "v1"},
		{key: "sample", repo: "e2e/sample", tag: "v2", pkg: "./scripts/images/pause", binary: "sample", user: "65532:65532", version: "v2"},
		{key: "sample", repo: "e2e/sample", tag: "v3", pkg: "./scripts/images/pause", binary: "sample", user: "65532:65532", version: "v3"},
	}
}

func main() {
	o := options{}
	flag.StringVar(&o.root, "root", ".", "repository root")
	flag.StringVar(&o.out, "out", "bin/images", "OCI layout directory (replaced)")
	flag.StringVar(&o.registry, "registry", "", "push to this plain-HTTP registry host:port, e.g. 127.0.0.1:5000")
	flag.StringVar(&o.tag, "tag", "", "tag of the add-on images; empty = appVersion of charts/kruise/Chart.yaml")
	flag.StringVar(&o.only, "only", "kruise-manager,kruise-daemon,pause", "comma-separated images to build: kruise-manager, kruise-daemon, pause, sample, kruise-addon")
	flag.StringVar(&o.caFile, "ca-file", "/etc/ssl/certs/ca-certificates.crt", "CA bundle copied into the images")
	flag.StringVar(&o.platforms, "platforms", "linux/"+runtime.GOARCH, "comma-separated linux/<arch> to build for, e.g. linux/amd64,linux/arm64; more than one writes an image index per image")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.tag == "" {
		t, err := appVersion(filepath.Join(o.root, "charts/kruise/Chart.yaml"))
		if err != nil {
			return err
		}
		o.tag = t
	}
	want := map[string]bool{}
	for _, k := range strings.Split(o.only, ",") {
		if k = strings.TrimSpace(k); k != "" {
			want[k] = true
		}
	}
	var todo []spec
	known := map[string]bool{}
	for _, s := range specs(o.tag) {
		known[s.key] = true
		if want[s.key] {
			todo = append(todo, s)
		}
	}
	for k := range want {
		if !known[k] {
			return fmt.Errorf("unknown image %q", k)
		}
	}
	archs, err := parsePlatforms(o.platforms)
	if err != nil {
		return err
	}
	ca, err := os.ReadFile(o.caFile)
	if err != nil {
		return fmt.Errorf("read CA bundle: %w", err)
	}
	bindir, err := os.MkdirTemp("", "kruise-images-")
	if err != nil {
		return fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(bindir)

	// Build every binary first, so a package that does not compile fails before anything is written.
	built := map[string]string{} // package and arch -> binary
	var buildErrs []string
	for _, s := range todo {
		for _, arch := range archs {
			key := s.pkg + " " + arch
			if _, ok := built[key]; ok {
				continue
			}
			out := filepath.Join(bindir, strings.ReplaceAll(strings.TrimPrefix(s.pkg, "./"), "/", "_")+"_"+arch)
			if err := goBuild(o.root, s.pkg, out, arch); err != nil {
				buildErrs = append(buildErrs, fmt.Sprintf("%s (%s, linux/%s) does not build:\n%v", s.key, s.pkg, arch, err))
				continue
			}
			built[key] = out
		}
	}
	if len(buildErrs) != 0 {
		return errors.New(strings.Join(buildErrs, "\n"))
	}

	if err := os.RemoveAll(o.out); err != nil {
		return fmt.Errorf("clear %s: %w", o.out, err)
	}
	lp, err := layout.Write(o.out, empty.Index)
	if err != nil {
		return fmt.Errorf("write layout: %w", err)
	}
	var digests []string
	for _, s := range todo {
		tag := s.tag
		if tag == "" {
			tag = o.tag
		}
		var imgs []v1.Image
		for _, arch := range archs {
			bin, err := os.ReadFile(built[s.pkg+" "+arch])
			if err != nil {
				return fmt.Errorf("read binary: %w", err)
			}
			img, err := imageFor(s, bin, ca, arch)
			if err != nil {
				return fmt.Errorf("image %s: %w", s.repo, err)
			}
			imgs = append(imgs, img)
		}
		ref := s.repo + ":" + tag
		ann := layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})
		var d v1.Hash
		var ii v1.ImageIndex
		if len(imgs) == 1 {
			if d, err = imgs[0].Digest(); err != nil {
				return fmt.Errorf("digest %s: %w", s.repo, err)
			}
			if err := lp.AppendImage(imgs[0], ann); err != nil {
				return fmt.Errorf("append %s to layout: %w", ref, err)
			}
		} else {
			ii = index(imgs, archs)
			if d, err = ii.Digest(); err != nil {
				return fmt.Errorf("digest %s: %w", s.repo, err)
			}
			if err := lp.AppendIndex(ii, ann); err != nil {
				return fmt.Errorf("append %s to layout: %w", ref, err)
			}
		}
		line := fmt.Sprintf("%s %s", ref, d)
		if o.registry != "" {
			r, err := name.ParseReference(o.registry+"/"+ref, name.Insecure)
			if err != nil {
				return fmt.Errorf("reference %s: %w", ref, err)
			}
			if ii != nil {
				err = remote.WriteIndex(r, ii)
			} else {
				err = remote.Write(r, imgs[0])
			}
			if err != nil {
				return fmt.Errorf("push %s: %w", r, err)
			}
			line = fmt.Sprintf("%s %s", r, d)
		}
		digests = append(digests, line)
		fmt.Println("image", line)
	}
	sort.Strings(digests)
	if err := os.WriteFile(filepath.Join(o.out, "digests.txt"), []byte(strings.Join(digests, "\n")+"\n"), 0o644); err != nil {
		return fmt.Errorf("write digests: %w", err)
	}
	fmt.Println("OCI layout:", o.out)
	return nil
}

func appVersion(chart string) (string, error) {
	b, err := os.ReadFile(chart)
	if err != nil {
		return "", fmt.Errorf("read chart: %w", err)
	}
	m := regexp.MustCompile(`(?m)^appVersion:\s*"?([^"\s]+)"?`).FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("no appVersion in %s", chart)
	}
	return string(m[1]), nil
}

// parsePlatforms turns "linux/amd64,linux/arm64" into architectures.
func parsePlatforms(s string) ([]string, error) {
	var archs []string
	seen := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		goos, arch, ok := strings.Cut(p, "/")
		if !ok || goos != "linux" || arch == "" || strings.Contains(arch, "/") {
			return nil, fmt.Errorf("-platforms: %q is not linux/<arch>, e.g. linux/amd64", p)
		}
		if !seen[arch] {
			seen[arch] = true
			archs = append(archs, arch)
		}
	}
	if len(archs) == 0 {
		return nil, errors.New("-platforms: empty; give linux/<arch>, e.g. linux/amd64")
	}
	return archs, nil
}

// index is an OCI image index of imgs, one per arch.
func index(imgs []v1.Image, archs []string) v1.ImageIndex {
	adds := make([]mutate.IndexAddendum, len(imgs))
	for i, img := range imgs {
		adds[i] = mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: archs[i]}}}
	}
	return mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
}

func goBuild(root, pkg, out, arch string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w\n%s", err, strings.TrimSpace(buf.String()))
	}
	return nil
}

// epoch is every file's mtime and the image's creation time, so builds are reproducible.
var epoch = time.Unix(0, 0).UTC()

func image(s spec, bin, ca []byte) (v1.Image, error) { return imageFor(s, bin, ca, runtime.GOARCH) }

// imageFor is the image of s for linux/arch.
func imageFor(s spec, bin, ca []byte, arch string) (v1.Image, error) {
	files := []file{
		{path: "etc/", dir: true},
		{path: "etc/passwd", body: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\nnobody:x:65535:65535:nobody:/nonexistent:/sbin/nologin\n")},
		{path: "etc/group", body: []byte("root:x:0:\nnonroot:x:65532:\nnobody:x:65535:\n")},
		{path: "etc/ssl/", dir: true},
		{path: "etc/ssl/certs/", dir: true},
		{path: "etc/ssl/certs/ca-certificates.crt", body: ca},
		{path: "home/", dir: true},
		{path: "home/nonroot/", dir: true, uid: 65532},
		{path: "tmp/", dir: true, mode: 0o1777},
	}
	base, err := layer(files)
	if err != nil {
		return nil, err
	}
	app := []file{{path: s.binary, body: bin, mode: 0o755}}
	if s.version != "" {
		app = append(app, file{path: "etc/image-version", body: []byte(s.version + "\n")})
	}
	top, err := layer(app)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), base, top)
	if err != nil {
		return nil, fmt.Errorf("append layers: %w", err)
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Created = v1.Time{Time: epoch}
	cf.Config.Entrypoint = []string{"/" + s.binary}
	cf.Config.User = s.user
	cf.Config.WorkingDir = "/"
	cf.Config.Env = []string{"PATH=/", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}
	cf.Config.Labels = map[string]string{"org.opencontainers.image.title": s.repo}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("set config: %w", err)
	}
	return img, nil
}

type file struct {
	path string
	body []byte
	dir  bool
	mode int64
	uid  int
}

func layer(files []file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.path, ModTime: epoch, Uid: f.uid, Gid: f.uid, Format: tar.FormatPAX}
		switch {
		case f.dir:
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		default:
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, int64(len(f.body))
		}
		if f.mode != 0 {
			h.Mode = f.mode
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("tar header %s: %w", f.path, err)
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, fmt.Errorf("tar %s: %w", f.path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("close tar: %w", err)
	}
	b := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return l, nil
}
