package bundle

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// Archive layout: the manifest, the packaged chart under chart/, the OCI layout under images/.
const (
	manifestFile = "bundle.json"
	// signatureFile is the signature of bundle.json, when the bundle is signed.
	signatureFile = "bundle.json.sig"
	chartDir      = "chart"
	imagesDir     = "images"
	// refNameAnnotation names an image in an OCI layout's index.json, as scripts/images writes it.
	refNameAnnotation = "org.opencontainers.image.ref.name"
	// SchemaVersion is the version of bundle.json this package writes and reads.
	SchemaVersion = 1
)

// Role is what the chart runs an image as; the chart's values for it live under <role>.image.
type Role string

const (
	RoleManager Role = "manager"
	RoleDaemon  Role = "daemon"
	RoleHook    Role = "hook"
	// RoleServer runs the console API (`kruise-addon serve`) when the chart's server.enabled is
	// set; a bundle holds it when created with Server.
	RoleServer Role = "server"
)

// Manifest is bundle.json: what a bundle holds.
type Manifest struct {
	SchemaVersion int       `json:"schemaVersion"`
	Chart         ChartInfo `json:"chart"`
	Images        []Image   `json:"images"`
	// Index is the digest of the image layout's index (images/index.json), sha256:<hex>, so that
	// bundle.json's digest, which a signature covers, covers every byte of the bundle.
	Index string `json:"index,omitempty"`
}

// ChartInfo names the packaged chart in a bundle.
type ChartInfo struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	AppVersion string `json:"appVersion"`
	// File is the package's path inside the bundle, e.g. chart/kruise-1.2.0.tgz.
	File string `json:"file"`
	// Digest is the package's sha256, hex.
	Digest string `json:"digest"`
}

// Image is one image in a bundle's OCI layout.
type Image struct {
	// Roles are the chart's uses of this image (the hook runs the manager's image by default).
	Roles      []Role `json:"roles"`
	Repository string `json:"repository"`
	Tag        string `json:"tag"`
	// Digest is the manifest's (or, for several platforms, the index's) digest, sha256:<hex>.
	Digest    string `json:"digest"`
	MediaType string `json:"mediaType"`
	// Platforms are os/arch[/variant] of each image the digest covers.
	Platforms []string `json:"platforms"`
	// Size is the bytes of every blob of the image in the layout.
	Size int64 `json:"size"`
}

// Ref is repository:tag, the image's name in the source layout and in a mirror.
func (i Image) Ref() string { return i.Repository + ":" + i.Tag }

// wanted is an image the chart references, before it is found in a layout.
type wanted struct {
	roles      []Role
	repository string
	tag        string
}

// chartImages lists the images the chart's default values reference, in the order manager,
// daemon, hook and, with server, the console API's; an image several roles share is listed
// once. An empty tag is the chart's appVersion, and the hook's empty fields take the manager
// image's, as the chart's helpers do.
func chartImages(values map[string]any, appVersion string, server bool) ([]wanted, error) {
	get := func(role Role) (repo, tag string) {
		img, _ := values[string(role)].(map[string]any)
		im, _ := img["image"].(map[string]any)
		repo, _ = im["repository"].(string)
		tag, _ = im["tag"].(string)
		return repo, tag
	}
	mRepo, mTag := get(RoleManager)
	dRepo, dTag := get(RoleDaemon)
	hRepo, hTag := get(RoleHook)
	sRepo, sTag := get(RoleServer)
	if hRepo == "" {
		hRepo = mRepo
	}
	if hTag == "" {
		hTag = mTag
	}
	var out []wanted
	add := func(role Role, repo, tag string) error {
		if repo == "" {
			return fmt.Errorf("chart values name no %s.image.repository", role)
		}
		if tag == "" {
			tag = appVersion
		}
		if strings.HasPrefix(tag, "sha256:") {
			return fmt.Errorf("chart values pin %s.image.tag to a digest (%s); a bundle finds images by tag", role, tag)
		}
		for i := range out {
			if out[i].repository == repo && out[i].tag == tag {
				out[i].roles = append(out[i].roles, role)
				return nil
			}
		}
		out = append(out, wanted{roles: []Role{role}, repository: repo, tag: tag})
		return nil
	}
	type roleImage struct {
		role      Role
		repo, tag string
	}
	roles := []roleImage{{RoleManager, mRepo, mTag}, {RoleDaemon, dRepo, dTag}, {RoleHook, hRepo, hTag}}
	if server {
		roles = append(roles, roleImage{RoleServer, sRepo, sTag})
	}
	for _, e := range roles {
		if err := add(e.role, e.repo, e.tag); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// CreateOptions are the inputs of a bundle.
type CreateOptions struct {
	// Chart is the packaged chart (PackageChart).
	Chart Chart
	// Layout is an OCI image layout holding every image the chart references, each named by an
	// org.opencontainers.image.ref.name annotation repository:tag (scripts/images writes one:
	// `make images IMAGES=kruise-manager,kruise-daemon`).
	Layout string
	// Server adds the console API's image (server.image, for the chart's server.enabled), which
	// the layout must then hold: `make images IMAGES=kruise-addon`.
	Server bool
	// SignKey is a PEM private key (ECDSA, ed25519 or RSA): with it the bundle carries a
	// signature of bundle.json, which names the digest of every other entry.
	SignKey []byte
}

// Create writes a bundle to w and returns its manifest. The archive is a plain tar with sorted
// entries, fixed modification times and no owners, so the same chart and images give the same
// bytes.
func Create(ctx context.Context, o CreateOptions, w io.Writer) (Manifest, error) {
	ch, err := loader.LoadArchive(bytes.NewReader(o.Chart.Data))
	if err != nil {
		return Manifest{}, fmt.Errorf("load packaged chart: %w", err)
	}
	want, err := chartImages(ch.Values, ch.Metadata.AppVersion, o.Server)
	if err != nil {
		return Manifest{}, err
	}
	src, err := layout.FromPath(o.Layout)
	if err != nil {
		return Manifest{}, fmt.Errorf("image layout %s: %w", o.Layout, err)
	}
	srcIndex, err := src.ImageIndex()
	if err != nil {
		return Manifest{}, fmt.Errorf("image layout %s: %w", o.Layout, err)
	}
	srcManifest, err := srcIndex.IndexManifest()
	if err != nil {
		return Manifest{}, fmt.Errorf("image layout %s: %w", o.Layout, err)
	}
	tmp, err := os.MkdirTemp("", "kruise-bundle-")
	if err != nil {
		return Manifest{}, err
	}
	defer os.RemoveAll(tmp)
	dst, err := layout.Write(filepath.Join(tmp, imagesDir), empty.Index)
	if err != nil {
		return Manifest{}, fmt.Errorf("write image layout: %w", err)
	}
	m := Manifest{SchemaVersion: SchemaVersion, Chart: ChartInfo{
		Name: ch.Metadata.Name, Version: ch.Metadata.Version, AppVersion: ch.Metadata.AppVersion,
		File: path.Join(chartDir, o.Chart.FileName()), Digest: o.Chart.Digest(),
	}}
	var missing []string
	for _, wt := range want {
		if err := ctx.Err(); err != nil {
			return Manifest{}, err
		}
		ref := wt.repository + ":" + wt.tag
		found := false
		for _, d := range srcManifest.Manifests {
			if d.Annotations[refNameAnnotation] != ref {
				continue
			}
			found = true
			img, err := copyImage(srcIndex, dst, d, ref)
			if err != nil {
				return Manifest{}, err
			}
			img.Roles, img.Repository, img.Tag = wt.roles, wt.repository, wt.tag
			m.Images = append(m.Images, img)
			break
		}
		if !found {
			missing = append(missing, fmt.Sprintf("%s (%s)", ref, joinRoles(wt.roles)))
		}
	}
	if len(missing) > 0 {
		return Manifest{}, fmt.Errorf("image layout %s lacks %s; build them with `make images IMAGES=%s`",
			o.Layout, strings.Join(missing, ", "), imagesToBuild(o.Server))
	}
	idx, err := os.ReadFile(filepath.Join(tmp, filepath.FromSlash(indexFile)))
	if err != nil {
		return Manifest{}, fmt.Errorf("write image layout: %w", err)
	}
	sum := sha256.Sum256(idx)
	m.Index = "sha256:" + hex.EncodeToString(sum[:])
	mj, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Manifest{}, err
	}
	mj = append(mj, '\n')
	tw := tar.NewWriter(w)
	if err := writeEntry(tw, manifestFile, mj); err != nil {
		return Manifest{}, err
	}
	if o.SignKey != nil {
		sig, err := sign(o.SignKey, mj)
		if err != nil {
			return Manifest{}, err
		}
		if err := writeEntry(tw, signatureFile, sig); err != nil {
			return Manifest{}, err
		}
	}
	if err := writeEntry(tw, m.Chart.File, o.Chart.Data); err != nil {
		return Manifest{}, err
	}
	if err := writeTree(ctx, tw, tmp, imagesDir); err != nil {
		return Manifest{}, err
	}
	if err := tw.Close(); err != nil {
		return Manifest{}, fmt.Errorf("write bundle: %w", err)
	}
	return m, nil
}

// imagesToBuild is the IMAGES of `make images` that builds a bundle's images.
func imagesToBuild(server bool) string {
	if server {
		return "kruise-manager,kruise-daemon,kruise-addon"
	}
	return "kruise-manager,kruise-daemon"
}

func joinRoles(rs []Role) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	return strings.Join(s, ", ")
}

func writeEntry(tw *tar.Writer, name string, data []byte) error {
	h := &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data)), ModTime: epoch, Format: tar.FormatPAX}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("write bundle entry %s: %w", name, err)
	}
	if _, err := tw.Write(data); err != nil {
		return fmt.Errorf("write bundle entry %s: %w", name, err)
	}
	return nil
}

// writeTree adds the regular files under root/dir, in lexical order (fs.WalkDir's), streaming
// each so that large layers are not held in memory.
func writeTree(ctx context.Context, tw *tar.Writer, root, dir string) error {
	return fs.WalkDir(os.DirFS(root), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h := &tar.Header{Name: p, Typeflag: tar.TypeReg, Mode: 0o644, Size: fi.Size(), ModTime: epoch, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("write bundle entry %s: %w", p, err)
		}
		f, err := os.Open(filepath.Join(root, p))
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := io.Copy(tw, f); err != nil {
			return fmt.Errorf("write bundle entry %s: %w", p, err)
		}
		return nil
	})
}

// Bundle is an opened bundle, verified: its manifest and chart, what its image layout holds, and
// (from Open) that layout unpacked into a temporary directory that Close removes.
type Bundle struct {
	// File is the bundle's path.
	File     string
	Manifest Manifest
	Chart    *chart.Chart
	// ChartData is the packaged chart, as in the bundle.
	ChartData []byte
	// Digest is bundle.json's digest, sha256:<hex>: what a signature signs.
	Digest string
	// Images are the images as the layout holds them, each platform's checked down to its
	// layers, in bundle.json's order.
	Images []ImageContent
	// Signature is the signature of bundle.json, nil for an unsigned bundle.
	Signature []byte
	// manifestData is bundle.json as in the bundle.
	manifestData []byte
	dir          string
}

// Layout is the bundle's OCI image layout (only for a bundle from Open).
func (b *Bundle) Layout() (layout.Path, error) {
	if b.dir == "" {
		return "", errors.New("bundle was read without its images")
	}
	return layout.FromPath(filepath.Join(b.dir, imagesDir))
}

// Close removes the unpacked images.
func (b *Bundle) Close() error {
	if b.dir == "" {
		return nil
	}
	return os.RemoveAll(b.dir)
}

// Read reads and verifies a bundle (see verify.go) without keeping its images: what an install
// from a bundle, verify and inspect need.
func Read(file string) (*Bundle, error) { return read(file, false) }

// Open reads and verifies a bundle and unpacks its images, for Push.
func Open(file string) (*Bundle, error) { return read(file, true) }

// Bounds of a bundle's entries. Each entry's size is checked from its header before any of it is
// read, so an entry that claims more (a sparse file weighs nothing in the archive) costs nothing.
// Create writes far less than any of them.
const (
	maxManifestBytes = 1 << 20
	// maxChartBytes bounds the packaged chart, about 110 KiB today.
	maxChartBytes = 16 << 20
	// maxLayoutFileBytes bounds images/oci-layout and images/index.json.
	maxLayoutFileBytes = 1 << 20
	// maxSignatureBytes bounds bundle.json.sig; an RSA-4096 signature in base64 is 684 bytes.
	maxSignatureBytes = 16 << 10
	// MaxImageBytes bounds what a bundle's manifest may declare its images weigh together; the
	// blobs of its layout may not exceed what it declares. The add-on's images weigh tens of MiB.
	MaxImageBytes = 1 << 30
)

// Entries of the OCI layout under imagesDir.
const (
	layoutFile  = imagesDir + "/oci-layout"
	indexFile   = imagesDir + "/index.json"
	blobsPrefix = imagesDir + "/blobs/sha256/"
)

// entryReader walks a bundle's archive, refusing anything but unique regular files with clean
// relative names.
type entryReader struct {
	file string
	tr   *tar.Reader
	seen map[string]bool
}

func (r *entryReader) next() (*tar.Header, error) {
	h, err := r.tr.Next()
	if err == io.EOF {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("bundle %s is not a bundle archive: %w", r.file, err)
	}
	if h.Typeflag != tar.TypeReg || path.Clean(h.Name) != h.Name || path.IsAbs(h.Name) || h.Name == ".." || strings.HasPrefix(h.Name, "../") {
		return nil, fmt.Errorf("bundle %s: unexpected entry %q: a bundle holds only regular files with clean relative names", r.file, h.Name)
	}
	if r.seen[h.Name] {
		return nil, fmt.Errorf("bundle %s: entry %q appears twice", r.file, h.Name)
	}
	r.seen[h.Name] = true
	return h, nil
}

// tooLarge is the error of an entry above its bound.
func (r *entryReader) tooLarge(h *tar.Header, limit int64, what string) error {
	return fmt.Errorf("bundle %s: entry %q is %d bytes, %s may be at most %d", r.file, h.Name, h.Size, what, limit)
}

// readAll reads an entry of at most limit bytes.
func (r *entryReader) readAll(h *tar.Header, limit int64, what string) ([]byte, error) {
	if h.Size > limit {
		return nil, r.tooLarge(h, limit, what)
	}
	data := make([]byte, h.Size)
	if _, err := io.ReadFull(r.tr, data); err != nil {
		return nil, fmt.Errorf("read bundle %s: entry %q: %w", r.file, h.Name, err)
	}
	return data, nil
}

// unknown is the error of an entry no bundle holds.
func (r *entryReader) unknown(name, chartFile string) error {
	return fmt.Errorf("bundle %s: unknown entry %q: a bundle holds only %s, %s, its chart %s and an image layout (%s, %s, %s<digest>)",
		r.file, name, manifestFile, signatureFile, chartFile, layoutFile, indexFile, blobsPrefix)
}

func read(file string, images bool) (_ *Bundle, err error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("open bundle: %w", err)
	}
	defer f.Close()
	b := &Bundle{File: file}
	if images {
		if b.dir, err = os.MkdirTemp("", "kruise-bundle-"); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				b.Close()
			}
		}()
	}
	r := &entryReader{file: file, tr: tar.NewReader(f), seen: map[string]bool{}}
	// bundle.json comes first (Create writes it so): it says which chart to expect and how much
	// the image blobs may weigh, before any of them is read.
	h, err := r.next()
	if err == io.EOF {
		return nil, fmt.Errorf("bundle %s has no %s: not a bundle that `kruise-addon bundle create` wrote", file, manifestFile)
	}
	if err != nil {
		return nil, err
	}
	if h.Name != manifestFile {
		return nil, fmt.Errorf("bundle %s: the first entry is %q, not %s: not a bundle that `kruise-addon bundle create` wrote", file, h.Name, manifestFile)
	}
	manifest, err := r.readAll(h, maxManifestBytes, "a manifest")
	if err != nil {
		return nil, err
	}
	b.manifestData = manifest
	sum := sha256.Sum256(manifest)
	b.Digest = "sha256:" + hex.EncodeToString(sum[:])
	if err := json.Unmarshal(manifest, &b.Manifest); err != nil {
		return nil, fmt.Errorf("bundle %s: %s: %w", file, manifestFile, err)
	}
	declared, err := checkManifest(b.Manifest)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %s: %w", file, manifestFile, err)
	}
	left := declared
	var data, index []byte
	bs := &blobs{seen: map[string]*blobSeen{}}
	for {
		h, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		name := h.Name
		switch {
		case name == b.Manifest.Chart.File:
			if data, err = r.readAll(h, maxChartBytes, "a packaged chart"); err != nil {
				return nil, err
			}
		case name == signatureFile:
			sig, err := r.readAll(h, maxSignatureBytes, "a signature")
			if err != nil {
				return nil, err
			}
			if b.Signature, err = decodeSignature(sig); err != nil {
				return nil, &VerifyError{Bundle: file, Entry: name, Reason: err.Error()}
			}
		case name == layoutFile || name == indexFile:
			content, err := r.readAll(h, maxLayoutFileBytes, "an image layout's "+path.Base(name))
			if err != nil {
				return nil, err
			}
			if name == indexFile {
				index = content
			}
			if images {
				if err := unpack(filepath.Join(b.dir, filepath.FromSlash(name)), bytes.NewReader(content)); err != nil {
					return nil, fmt.Errorf("read bundle %s: entry %q: %w", file, name, err)
				}
			}
		case isBlob(name):
			if h.Size > left {
				return nil, fmt.Errorf("bundle %s: entry %q is %d bytes, more than the %d bytes left of the %d that the images' declared sizes in %s allow for every blob",
					file, name, h.Size, left, declared, manifestFile)
			}
			left -= h.Size
			dst := ""
			if images {
				dst = filepath.Join(b.dir, filepath.FromSlash(name))
			}
			if err := bs.consume(r.tr, strings.TrimPrefix(name, blobsPrefix), h.Size, dst); err != nil {
				return nil, fmt.Errorf("read bundle %s: entry %q: %w", file, name, err)
			}
		default:
			return nil, r.unknown(name, b.Manifest.Chart.File)
		}
	}
	if data == nil {
		return nil, fmt.Errorf("bundle %s lacks its chart %s", file, b.Manifest.Chart.File)
	}
	if got := (Chart{Data: data}).Digest(); got != b.Manifest.Chart.Digest {
		return nil, &VerifyError{Bundle: file, Entry: b.Manifest.Chart.File, Reason: fmt.Sprintf("digest sha256:%s, %s records sha256:%s", got, manifestFile, b.Manifest.Chart.Digest)}
	}
	if b.Images, err = checkLayout(file, b.Manifest, index, bs); err != nil {
		return nil, err
	}
	if b.Chart, err = loader.LoadArchive(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("bundle %s: chart: %w", file, err)
	}
	b.ChartData = data
	return b, nil
}

// checkManifest checks what read relies on: the version, the chart's place in the bundle, and
// the images' sizes, whose sum it returns.
func checkManifest(m Manifest) (int64, error) {
	if m.SchemaVersion != SchemaVersion {
		return 0, fmt.Errorf("schemaVersion %d, this build reads %d", m.SchemaVersion, SchemaVersion)
	}
	if f := m.Chart.File; path.Dir(f) != chartDir || path.Clean(f) != f || !strings.HasSuffix(f, ".tgz") {
		return 0, fmt.Errorf("chart.file %q: must be %s/<name>-<version>.tgz", f, chartDir)
	}
	var total int64
	for _, img := range m.Images {
		if img.Size < 0 || img.Size > MaxImageBytes-total {
			return 0, fmt.Errorf("image %s is declared %d bytes, which puts the images above the %d bytes a bundle's images may weigh at most", img.Ref(), img.Size, MaxImageBytes)
		}
		total += img.Size
	}
	return total, nil
}

// isBlob says whether name is a blob of the layout: blobs/sha256/ and a digest's 64 hex digits.
func isBlob(name string) bool {
	hexDigest, ok := strings.CutPrefix(name, blobsPrefix)
	if !ok || len(hexDigest) != 64 {
		return false
	}
	for _, c := range hexDigest {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// unpack streams r into dst.
func unpack(dst string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sortedImages returns m's images ordered by reference.
func sortedImages(m Manifest) []Image {
	out := append([]Image(nil), m.Images...)
	sort.Slice(out, func(a, b int) bool { return out[a].Ref() < out[b].Ref() })
	return out
}
