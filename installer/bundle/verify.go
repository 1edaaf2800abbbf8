package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// VerifyError is a bundle whose content is not what it records: a blob that does not hash to its
// digest, a manifest or index that names a blob the bundle lacks or one of another size, an
// image of bundle.json the layout's index does not hold at that digest, a chart whose digest
// differs, or a signature that does not verify. It names the bundle file and, for a blob, its
// digest and the image and platform it belongs to.
type VerifyError struct {
	Bundle string `json:"bundle"`
	// Entry is the archive entry at fault, when it is not a blob (bundle.json, the chart,
	// images/index.json).
	Entry string `json:"entry,omitempty"`
	// Blob is the blob at fault, sha256:<hex>.
	Blob string `json:"blob,omitempty"`
	// Image is repository:tag of the image the blob belongs to, Platform its os/arch[/variant]
	// and Part what the blob is to it: index, manifest, config or layer.
	Image    string `json:"image,omitempty"`
	Platform string `json:"platform,omitempty"`
	Part     string `json:"part,omitempty"`
	Reason   string `json:"reason"`
}

func (e *VerifyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "bundle %s does not verify: ", e.Bundle)
	switch {
	case e.Blob != "":
		fmt.Fprintf(&b, "blob %s", e.Blob)
		var of []string
		if e.Part != "" {
			of = append(of, e.Part)
		}
		if e.Image != "" {
			of = append(of, "of image "+e.Image)
		}
		if e.Platform != "" {
			of = append(of, e.Platform)
		}
		if len(of) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(of, " "))
		}
	case e.Entry != "":
		fmt.Fprintf(&b, "entry %s", e.Entry)
	case e.Image != "":
		fmt.Fprintf(&b, "image %s", e.Image)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	if e.Entry != signatureFile {
		b.WriteString("; the bundle was changed or damaged after `kruise-addon bundle create` wrote it: copy it again from its source")
	}
	return b.String()
}

// Bounds of what verification keeps in memory: the content of small JSON blobs (manifests,
// indexes and configs; the add-on's weigh a few KiB together).
const (
	maxJSONBlobBytes  = 1 << 20
	maxJSONBlobsBytes = 16 << 20
)

// blobSeen is what read learnt of a blob while it streamed by.
type blobSeen struct {
	size int64
	// bad is why its content is not its digest; empty when it is.
	bad string
	// json is its content when it may be a manifest, an index or a config.
	json []byte
}

// blobs is every blob of a bundle's layout by digest (sha256:<hex>), and how many bytes of JSON
// blobs it holds.
type blobs struct {
	seen      map[string]*blobSeen
	jsonBytes int64
}

// consume reads one blob of size bytes from r, hashing it against its name, into dst when dst
// is not empty (a blob whose content is not its digest is removed again), keeping its content
// when it is small JSON. Only an I/O failure is an error; a wrong digest is recorded.
func (bs *blobs) consume(r io.Reader, hexDigest string, size int64, dst string) error {
	s := &blobSeen{size: size}
	bs.seen["sha256:"+hexDigest] = s
	var w io.Writer = io.Discard
	var f *os.File
	if dst != "" {
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		var err error
		if f, err = os.Create(dst); err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	h := sha256.New()
	var keep *strings.Builder
	if size <= maxJSONBlobBytes && bs.jsonBytes+size <= maxJSONBlobsBytes {
		keep = &strings.Builder{}
		w = io.MultiWriter(w, keep)
	}
	if _, err := io.Copy(io.MultiWriter(w, h), r); err != nil {
		return err
	}
	if f != nil {
		if err := f.Close(); err != nil {
			return err
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != hexDigest {
		s.bad = fmt.Sprintf("content has digest sha256:%s, not the sha256:%s its name says", got, hexDigest)
		if dst != "" {
			os.Remove(dst)
		}
		return nil
	}
	if keep != nil && strings.HasPrefix(keep.String(), "{") {
		s.json = []byte(keep.String())
		bs.jsonBytes += size
	}
	return nil
}

// PlatformImage is one platform's image of a bundle image.
type PlatformImage struct {
	Platform string `json:"platform"`
	// Digest is the image manifest's digest.
	Digest string `json:"digest"`
	// Size is the bytes of its manifest, config and layers.
	Size   int64 `json:"size"`
	Layers int   `json:"layers"`
}

// ImageContent is a bundle image as its layout holds it, checked blob by blob.
type ImageContent struct {
	Image
	// Manifests are its platforms' images, by platform.
	Manifests []PlatformImage `json:"manifests"`
}

// layoutCheck walks a bundle's layout from bundle.json's images down to every blob.
type layoutCheck struct {
	file  string
	blobs *blobs
	used  map[string]bool
}

func (c *layoutCheck) fail(e VerifyError) error {
	e.Bundle = c.file
	return &e
}

// blob checks that d names a blob of the bundle of d's size whose content is its digest, and
// returns its content when want is set (a manifest, index or config).
func (c *layoutCheck) blob(d v1.Descriptor, image, platform, part string, want bool) ([]byte, error) {
	e := VerifyError{Blob: d.Digest.String(), Image: image, Platform: platform, Part: part}
	if d.Digest.Algorithm != "sha256" {
		e.Reason = fmt.Sprintf("digest algorithm %q; a bundle holds sha256 blobs only", d.Digest.Algorithm)
		return nil, c.fail(e)
	}
	s, ok := c.blobs.seen[d.Digest.String()]
	switch {
	case !ok:
		e.Reason = "the bundle has no such blob"
	case s.bad != "":
		e.Reason = s.bad
	case s.size != d.Size:
		e.Reason = fmt.Sprintf("%d bytes, the descriptor that names it says %d", s.size, d.Size)
	case want && s.json == nil:
		e.Reason = "not a JSON document"
	}
	if e.Reason != "" {
		return nil, c.fail(e)
	}
	c.used[d.Digest.String()] = true
	return s.json, nil
}

// image checks one image manifest and its config and layers, returning its platform's entry.
func (c *layoutCheck) image(d v1.Descriptor, image, platform string) (PlatformImage, error) {
	raw, err := c.blob(d, image, platform, "manifest", true)
	if err != nil {
		return PlatformImage{}, err
	}
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return PlatformImage{}, c.fail(VerifyError{Blob: d.Digest.String(), Image: image, Platform: platform, Part: "manifest", Reason: "not an image manifest: " + err.Error()})
	}
	if m.MediaType != "" && m.MediaType != d.MediaType {
		return PlatformImage{}, c.fail(VerifyError{Blob: d.Digest.String(), Image: image, Platform: platform, Part: "manifest",
			Reason: fmt.Sprintf("media type %s, the descriptor that names it says %s", m.MediaType, d.MediaType)})
	}
	cfgRaw, err := c.blob(m.Config, image, platform, "config", true)
	if err != nil {
		return PlatformImage{}, err
	}
	var cfg struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
		Variant      string `json:"variant"`
	}
	if err := json.Unmarshal(cfgRaw, &cfg); err != nil {
		return PlatformImage{}, c.fail(VerifyError{Blob: m.Config.Digest.String(), Image: image, Platform: platform, Part: "config", Reason: "not an image config: " + err.Error()})
	}
	p := cfg.OS + "/" + cfg.Architecture
	if cfg.Variant != "" {
		p += "/" + cfg.Variant
	}
	if platform != "" && platform != p {
		return PlatformImage{}, c.fail(VerifyError{Blob: m.Config.Digest.String(), Image: image, Platform: platform, Part: "config",
			Reason: fmt.Sprintf("the config says platform %s, the index %s", p, platform)})
	}
	out := PlatformImage{Platform: p, Digest: d.Digest.String(), Size: d.Size + m.Config.Size, Layers: len(m.Layers)}
	for _, l := range m.Layers {
		if _, err := c.blob(l, image, p, "layer", false); err != nil {
			return PlatformImage{}, err
		}
		out.Size += l.Size
	}
	return out, nil
}

// checkLayout checks the layout's index against bundle.json and every image in it down to its
// layers, the index's digest against the one bundle.json records, and that the layout holds no
// blob none of the images names.
func checkLayout(file string, m Manifest, indexJSON []byte, bs *blobs) ([]ImageContent, error) {
	c := &layoutCheck{file: file, blobs: bs, used: map[string]bool{}}
	if indexJSON == nil {
		return nil, c.fail(VerifyError{Entry: indexFile, Reason: "the bundle has no image layout index"})
	}
	var idx v1.IndexManifest
	if err := json.Unmarshal(indexJSON, &idx); err != nil {
		return nil, c.fail(VerifyError{Entry: indexFile, Reason: "not an OCI image index: " + err.Error()})
	}
	byRef := map[string]v1.Descriptor{}
	for _, d := range idx.Manifests {
		ref := d.Annotations[refNameAnnotation]
		if _, dup := byRef[ref]; dup {
			return nil, c.fail(VerifyError{Entry: indexFile, Reason: fmt.Sprintf("names image %q twice", ref)})
		}
		byRef[ref] = d
	}
	var out []ImageContent
	for _, img := range m.Images {
		d, ok := byRef[img.Ref()]
		if !ok {
			return nil, c.fail(VerifyError{Image: img.Ref(), Reason: fmt.Sprintf("%s lists it, %s does not", manifestFile, indexFile)})
		}
		delete(byRef, img.Ref())
		if d.Digest.String() != img.Digest || string(d.MediaType) != img.MediaType {
			return nil, c.fail(VerifyError{Image: img.Ref(), Reason: fmt.Sprintf("%s names %s (%s), %s %s (%s)",
				manifestFile, img.Digest, img.MediaType, indexFile, d.Digest, d.MediaType)})
		}
		ic := ImageContent{Image: img}
		switch {
		case d.MediaType.IsIndex():
			raw, err := c.blob(d, img.Ref(), "", "index", true)
			if err != nil {
				return nil, err
			}
			var ii v1.IndexManifest
			if err := json.Unmarshal(raw, &ii); err != nil {
				return nil, c.fail(VerifyError{Blob: d.Digest.String(), Image: img.Ref(), Part: "index", Reason: "not an image index: " + err.Error()})
			}
			for _, cd := range ii.Manifests {
				p := ""
				if cd.Platform != nil {
					p = cd.Platform.String()
				}
				if !cd.MediaType.IsImage() {
					return nil, c.fail(VerifyError{Blob: cd.Digest.String(), Image: img.Ref(), Platform: p, Part: "manifest", Reason: fmt.Sprintf("media type %s is not an image manifest", cd.MediaType)})
				}
				pi, err := c.image(cd, img.Ref(), p)
				if err != nil {
					return nil, err
				}
				ic.Manifests = append(ic.Manifests, pi)
			}
		case d.MediaType.IsImage():
			pi, err := c.image(d, img.Ref(), "")
			if err != nil {
				return nil, err
			}
			ic.Manifests = append(ic.Manifests, pi)
		default:
			return nil, c.fail(VerifyError{Image: img.Ref(), Reason: fmt.Sprintf("media type %s is neither an image nor an index", d.MediaType)})
		}
		sort.Slice(ic.Manifests, func(a, b int) bool { return ic.Manifests[a].Platform < ic.Manifests[b].Platform })
		if err := c.matchesManifest(ic, d); err != nil {
			return nil, err
		}
		out = append(out, ic)
	}
	for ref := range byRef {
		return nil, c.fail(VerifyError{Entry: indexFile, Reason: fmt.Sprintf("names image %q, which %s does not list", ref, manifestFile)})
	}
	// Last, so that an index changed along with a manifest names the image first.
	sum := sha256.Sum256(indexJSON)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != m.Index {
		reason := fmt.Sprintf("digest %s, %s records %s", got, manifestFile, m.Index)
		if m.Index == "" {
			reason = fmt.Sprintf("%s records no digest of it (index): create the bundle again with this kruise-addon", manifestFile)
		}
		return nil, c.fail(VerifyError{Entry: indexFile, Reason: reason})
	}
	var unused []string
	for dg := range bs.seen {
		if !c.used[dg] {
			unused = append(unused, dg)
		}
	}
	if len(unused) > 0 {
		sort.Strings(unused)
		s := bs.seen[unused[0]]
		reason := "no image of the bundle names it"
		if s.bad != "" {
			reason = s.bad + ", and " + reason
		}
		return nil, c.fail(VerifyError{Blob: unused[0], Reason: reason})
	}
	return out, nil
}

// matchesManifest checks what bundle.json says of an image (platforms, size) against its
// layout.
func (c *layoutCheck) matchesManifest(ic ImageContent, d v1.Descriptor) error {
	var platforms []string
	size := int64(0)
	if d.MediaType.IsIndex() {
		size = d.Size
	}
	for _, pi := range ic.Manifests {
		platforms = append(platforms, pi.Platform)
		size += pi.Size
	}
	if strings.Join(platforms, ",") != strings.Join(ic.Platforms, ",") || size != ic.Size {
		return c.fail(VerifyError{Image: ic.Ref(), Reason: fmt.Sprintf("%s says platforms %s and %d bytes, the layout holds %s and %d bytes",
			manifestFile, strings.Join(ic.Platforms, ","), ic.Size, strings.Join(platforms, ","), size)})
	}
	return nil
}
