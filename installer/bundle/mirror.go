package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing/fstest"

	"helm.sh/helm/v3/pkg/chartutil"
)

// MirroredChart is the bundle's chart pointed at the registry its images were pushed to: its
// values.yaml names that registry (imageRegistry) and runs each role's image by digest, so that
// plain helm installs it as it is found, without knowing which values to set. Only those lines
// of values.yaml change; its comments stay.
func MirroredChart(b *Bundle, registry string) (Chart, error) {
	return chartWithValues(b.ChartData, Values(b.Manifest, registry))
}

// RegistryChart is chart c with imageRegistry in its values.yaml set to registry, for a chart
// whose images were mirrored without a bundle (so by tag, no digest is known): plain helm then
// installs it as it is found, where the chart's own default names no registry and fails.
func RegistryChart(c Chart, registry string) (Chart, error) {
	return chartWithValues(c.Data, map[string]any{"imageRegistry": strings.TrimSuffix(registry, "/")})
}

// chartWithValues is the packaged chart data with want written into its values.yaml.
func chartWithValues(data []byte, want map[string]any) (Chart, error) {
	files, err := chartFiles(data)
	if err != nil {
		return Chart{}, err
	}
	f, ok := files["values.yaml"]
	if !ok {
		return Chart{}, errors.New("bundle chart: no values.yaml")
	}
	out, err := setValues(string(f.Data), want)
	if err != nil {
		return Chart{}, fmt.Errorf("bundle chart values.yaml: %w", err)
	}
	f.Data = []byte(out)
	return PackageChart(files)
}

// chartFiles unpacks a packaged chart, its files relative to the chart's directory.
func chartFiles(data []byte) (fstest.MapFS, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("bundle chart: %w", err)
	}
	tr := tar.NewReader(zr)
	files := fstest.MapFS{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("bundle chart: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		_, rel, ok := strings.Cut(path.Clean(h.Name), "/")
		if !ok {
			continue
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("bundle chart %s: %w", h.Name, err)
		}
		files[rel] = &fstest.MapFile{Data: body, Mode: 0o644}
	}
}

var (
	topKey   = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9]*):`)
	imageKey = regexp.MustCompile(`^  image:\s*$`)
	fieldKey = regexp.MustCompile(`^    (registry|repository|tag):`)
)

// setValues writes want's imageRegistry and <role>.image.{registry,repository,tag} into the
// values.yaml text in place, then checks that the text now reads as want says.
func setValues(text string, want map[string]any) (string, error) {
	lines := strings.Split(text, "\n")
	top, inImage := "", false
	for i, l := range lines {
		if m := topKey.FindStringSubmatch(l); m != nil {
			top, inImage = m[1], false
			if top == "imageRegistry" {
				lines[i] = "imageRegistry: " + strconv.Quote(want["imageRegistry"].(string))
			}
			continue
		}
		if imageKey.MatchString(l) {
			inImage = true
			continue
		}
		if inImage && strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") && strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#") {
			inImage = false
		}
		role, ok := want[top].(map[string]any)
		if !inImage || !ok {
			continue
		}
		if m := fieldKey.FindStringSubmatch(l); m != nil {
			lines[i] = "    " + m[1] + ": " + strconv.Quote(role["image"].(map[string]any)[m[1]].(string))
		}
	}
	out := strings.Join(lines, "\n")
	got, err := chartutil.ReadValues([]byte(out))
	if err != nil {
		return "", err
	}
	for key, w := range want {
		g := got[key]
		if wm, ok := w.(map[string]any); ok {
			gm, _ := g.(map[string]any)
			img, _ := gm["image"].(map[string]any)
			for f, v := range wm["image"].(map[string]any) {
				if img[f] != v {
					return "", fmt.Errorf("%s.image.%s reads %v after the rewrite, want %v: the file's layout is not the one this rewrite knows", key, f, img[f], v)
				}
			}
			continue
		}
		if !reflect.DeepEqual(g, w) {
			return "", fmt.Errorf("%s reads %v after the rewrite, want %v", key, g, w)
		}
	}
	return out, nil
}
