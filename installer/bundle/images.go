package bundle

import (
	"fmt"
	"sort"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// copyImage copies the image or index that d describes from src into dst, named ref, and
// describes it: digest, media type, platforms and size.
func copyImage(src v1.ImageIndex, dst layout.Path, d v1.Descriptor, ref string) (Image, error) {
	out := Image{Digest: d.Digest.String(), MediaType: string(d.MediaType)}
	ann := layout.WithAnnotations(map[string]string{refNameAnnotation: ref})
	if d.MediaType.IsIndex() {
		ii, err := src.ImageIndex(d.Digest)
		if err != nil {
			return Image{}, fmt.Errorf("image %s: %w", ref, err)
		}
		im, err := ii.IndexManifest()
		if err != nil {
			return Image{}, fmt.Errorf("image %s: %w", ref, err)
		}
		for _, c := range im.Manifests {
			_, p, size, err := describe(ii, c.Digest)
			if err != nil {
				return Image{}, fmt.Errorf("image %s: %w", ref, err)
			}
			out.Platforms = append(out.Platforms, p)
			out.Size += size
		}
		out.Size += d.Size
		sort.Strings(out.Platforms)
		if err := dst.AppendIndex(ii, ann); err != nil {
			return Image{}, fmt.Errorf("copy image %s: %w", ref, err)
		}
		return out, nil
	}
	if !d.MediaType.IsImage() {
		return Image{}, fmt.Errorf("image %s: media type %s is neither an image nor an index", ref, d.MediaType)
	}
	img, p, size, err := describe(src, d.Digest)
	if err != nil {
		return Image{}, fmt.Errorf("image %s: %w", ref, err)
	}
	out.Platforms, out.Size = []string{p}, size
	if err := dst.AppendImage(img, ann); err != nil {
		return Image{}, fmt.Errorf("copy image %s: %w", ref, err)
	}
	return out, nil
}

// describe reads the image of index that digest names: its platform and the size of its
// manifest, config and layers.
func describe(index v1.ImageIndex, digest v1.Hash) (v1.Image, string, int64, error) {
	img, err := index.Image(digest)
	if err != nil {
		return nil, "", 0, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, "", 0, err
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, "", 0, err
	}
	raw, err := img.RawManifest()
	if err != nil {
		return nil, "", 0, err
	}
	size := int64(len(raw)) + m.Config.Size
	for _, l := range m.Layers {
		size += l.Size
	}
	p := cf.OS + "/" + cf.Architecture
	if cf.Variant != "" {
		p += "/" + cf.Variant
	}
	return img, p, size, nil
}
