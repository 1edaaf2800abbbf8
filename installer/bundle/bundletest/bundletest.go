package bundletest

import (
	"archive/tar"
	"crypto/sha256"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ChartRefs are the images the add-on's chart references at appVersion, as scripts/images names
// them in its layout.
func ChartRefs(appVersion string) []string {
	return []string{"kruise-addon/kruise-manager:" + appVersion, "kruise-addon/kruise-daemon:" + appVersion}
}

// Entry is one file of an archive, as a test reads and rewrites a bundle.
type Entry struct {
	Name string
	Data []byte
}

// ReadEntries reads every entry of the tar archive at p, in order.
func ReadEntries(p string) ([]Entry, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Entry
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		out = append(out, Entry{Name: h.Name, Data: data})
	}
}

// ServerRef is the console API's image (server.image) at appVersion, as scripts/images names it.
func ServerRef(appVersion string) string { return "kruise-addon/kruise-addon:" + appVersion }

// Image is a one-layer linux/amd64 image whose content is derived from seed, layerBytes long:
// the same seed gives the same digest.
func Image(seed string, layerBytes int) (v1.Image, error) {
	return PlatformImage(seed, layerBytes, v1.Platform{OS: "linux", Architecture: "amd64"})
}

// PlatformImage is Image for another platform.
func PlatformImage(seed string, layerBytes int, p v1.Platform) (v1.Image, error) {
	body := make([]byte, 0, layerBytes)
	block := sha256.Sum256([]byte(seed))
	for len(body) < layerBytes {
		body = append(body, block[:]...)
		block = sha256.Sum256(block[:])
	}
	layer := static.NewLayer(body[:layerBytes], types.OCIUncompressedLayer)
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Config.Labels = map[string]string{"seed": seed}
	return mutate.ConfigFile(img, cf)
}

// WriteLayout writes an OCI layout at dir holding one image per ref (repository:tag), named by
// the org.opencontainers.image.ref.name annotation as scripts/images does.
func WriteLayout(dir string, layerBytes int, refs ...string) error {
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	for _, ref := range refs {
		img, err := Image(ref, layerBytes)
		if err != nil {
			return fmt.Errorf("image %s: %w", ref, err)
		}
		if err := lp.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})); err != nil {
			return fmt.Errorf("append %s: %w", ref, err)
		}
	}
	return nil
}

// WriteIndexLayout writes an OCI layout at dir holding, per ref, an image index of one image per
// platform, as a multi-platform build would.
func WriteIndexLayout(dir string, layerBytes int, platforms []v1.Platform, refs ...string) error {
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	for _, ref := range refs {
		var adds []mutate.IndexAddendum
		for _, p := range platforms {
			img, err := PlatformImage(ref+" "+p.String(), layerBytes, p)
			if err != nil {
				return fmt.Errorf("image %s %s: %w", ref, p, err)
			}
			adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
		}
		ii := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
		if err := lp.AppendIndex(ii, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})); err != nil {
			return fmt.Errorf("append %s: %w", ref, err)
		}
	}
	return nil
}

// Registry serves an in-memory registry on loopback for the test's lifetime and returns its
// host:port. With a username, every request must carry that basic auth, or gets 401 with a
// Basic challenge, as a private registry does.
func Registry(t testing.TB, username, password string) string {
	host, _ := CountingRegistry(t, username, password)
	return host
}

// CountingRegistry is Registry that also counts the requests that write (any method but GET
// and HEAD), so that a test can prove a command sent nothing.
func CountingRegistry(t testing.TB, username, password string) (string, func() int64) {
	t.Helper()
	var writes atomic.Int64
	inner0 := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writes.Add(1)
		}
		inner0.ServeHTTP(w, r)
	})
	if username != "" {
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, p, ok := r.BasicAuth()
			if !ok || u != username || p != password {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
			inner.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), writes.Load
}
