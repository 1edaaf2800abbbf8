package bench

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kruise-addon/kruise-addon/charts"
	"github.com/kruise-addon/kruise-addon/installer/bundle"
	"github.com/kruise-addon/kruise-addon/installer/bundle/bundletest"
)

// BenchmarkBundle prints the air-gap bundle's figures: `bundle create` time and size, against
// tarring the same OCI layout's files; `bundle push` of the images and the chart into an empty
// loopback registry, against pushing the same images straight from the layout with
// go-containerregistry; a second push into the same registry (every blob already there); and
// the check an install makes. The manager and daemon images are synthetic, one layer of
// BENCH_BUNDLE_MB MiB each (default 16, near the real images' size); at most 3 rounds run
// whatever b.N asks.
func BenchmarkBundle(b *testing.B) {
	ctx := context.Background()
	n := min(b.N, 3)
	dir := b.TempDir()
	fsys, err := charts.Kruise()
	if err != nil {
		b.Fatal(err)
	}
	c, err := bundle.PackageChart(fsys)
	if err != nil {
		b.Fatal(err)
	}
	lay := filepath.Join(dir, "layout")
	mb := envInt("BENCH_BUNDLE_MB", 16)
	if err := bundletest.WriteLayout(lay, mb<<20, bundletest.ChartRefs(c.Metadata.AppVersion)...); err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(dir, "bundle.tar")

	base := measure(b, n, func() error { return tarTree(lay, filepath.Join(dir, "plain.tar")) })
	b.ResetTimer()
	create := measure(b, n, func() error {
		f, err := os.Create(file)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = bundle.Create(ctx, bundle.CreateOptions{Chart: c, Layout: lay}, f)
		return err
	})
	b.StopTimer()
	fi, err := os.Stat(file)
	if err != nil {
		b.Fatal(err)
	}

	plainPush := measure(b, n, func() error { return pushLayout(ctx, lay, bundletest.Registry(b, "", "")) })
	var m bundle.Manifest
	var host string
	push := measure(b, n, func() error {
		bd, err := bundle.Open(file)
		if err != nil {
			return err
		}
		defer bd.Close()
		m, host = bd.Manifest, bundletest.Registry(b, "", "")
		_, err = bundle.Push(ctx, bd, bundle.PushOptions{Registry: bundle.Registry{Host: host}, ChartRepository: "charts"})
		return err
	})
	again := measure(b, n, func() error {
		bd, err := bundle.Open(file)
		if err != nil {
			return err
		}
		defer bd.Close()
		_, err = bundle.Push(ctx, bd, bundle.PushOptions{Registry: bundle.Registry{Host: host}, ChartRepository: "charts"})
		return err
	})
	verify := measure(b, n, func() error { return bundle.Verify(ctx, m, bundle.Registry{Host: host}) })

	size := float64(fi.Size()) / (1 << 20)
	fmt.Printf("bundle create (2 images of %d MiB + chart %d KiB): %v, %.1f MiB, %.0f MiB/s; baseline tar of the layout %v; ratio %.1fx\n",
		mb, len(c.Data)>>10, create.Round(time.Millisecond), size, size/create.Seconds(), base.Round(time.Millisecond), float64(create)/float64(base))
	fmt.Printf("bundle push into an empty loopback registry: %v (unpack + images + chart); baseline images pushed from the layout %v; ratio %.1fx\n",
		push.Round(time.Millisecond), plainPush.Round(time.Millisecond), float64(push)/float64(plainPush))
	fmt.Printf("bundle push again (every blob present): %v; verify before install: %v; %d round(s)\n",
		again.Round(time.Millisecond), verify.Round(time.Microsecond), n)
}

// tarTree writes the files under root into a plain tar at out: the baseline for create.
func tarTree(root, out string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if err := tw.WriteHeader(&tar.Header{Name: rel, Mode: 0o644, Size: fi.Size(), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// pushLayout pushes every image of an OCI layout by its ref name: the baseline for push.
func pushLayout(ctx context.Context, dir, host string) error {
	lp, err := layout.FromPath(dir)
	if err != nil {
		return err
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		return err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			return err
		}
		ref, err := name.ParseReference(host + "/" + d.Annotations["org.opencontainers.image.ref.name"])
		if err != nil {
			return err
		}
		if err := remote.Write(ref, img, remote.WithContext(ctx)); err != nil {
			return err
		}
	}
	return nil
}
