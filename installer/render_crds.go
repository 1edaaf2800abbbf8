package installer

import (
	"bytes"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"unicode"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/kruise-addon/kruise-addon/charts"
)

// A client-side render spends most of its time in Helm's manifest sorter, which splits the
// output with a regular expression and parses every document whole to read its kind and
// annotations; the CRD specs are nearly all of the bytes. The chart's crds.yaml copies each
// spec as generated, so the render can hand Helm the CRD files with a short placeholder for
// each spec and put the specs back into the manifest Helm returns. The result is the same
// bytes: the head Helm sorts on is untouched, and a spec that could change how Helm splits or
// trims the stream keeps going through Helm.

const (
	crdTemplate = "templates/crds.yaml"
	crdFiles    = "files/crds/"
	// specMark is where crds.yaml splits a CRD file, as its splitn does.
	specMark = "\nspec:\n"
)

// crdSpecs are the specs taken out of a chart's CRD files, by the placeholder that stands for
// each in the render.
type crdSpecs map[string][]byte

// withoutCRDSpecs returns a copy of ch whose CRD files carry a placeholder instead of their
// spec, and the specs, or ch and no specs when the copy could render differently: when ch's
// crds.yaml is not the one this was written for (which copies each spec, trimmed of its last
// newline, and reads nothing else of it), or for a file whose spec Helm's sorter might not keep
// as it is (see copiedVerbatim).
func withoutCRDSpecs(ch *chart.Chart) (*chart.Chart, crdSpecs) {
	if !copiesCRDSpecs(ch) {
		return ch, nil
	}
	specs := crdSpecs{}
	files := make([]*chart.File, len(ch.Files))
	for i, f := range ch.Files {
		files[i] = f
		if !strings.HasPrefix(f.Name, crdFiles) || !strings.HasSuffix(f.Name, ".yaml") {
			continue
		}
		head, spec, ok := bytes.Cut(f.Data, []byte(specMark))
		if !ok {
			continue
		}
		spec = bytes.TrimSuffix(spec, []byte("\n"))
		if !copiedVerbatim(spec) {
			continue
		}
		// Indented, so that Helm reads the document as YAML with a spec, as it would the real one.
		placeholder := fmt.Sprintf("  kruise-addon-crd-spec-%d-of-%d", i, len(ch.Files))
		specs[placeholder] = spec
		files[i] = &chart.File{Name: f.Name, Data: []byte(string(head) + specMark + placeholder + "\n")}
	}
	if len(specs) == 0 {
		return ch, nil
	}
	cp := *ch
	cp.Files = files
	return &cp, specs
}

// copiedVerbatim tells whether Helm's sorter would keep spec, the end of a document, as it is:
// every line is empty or indented under spec: (so none is a document separator, ---, on which
// Helm splits, nor a key beside spec that Helm would read), and it ends in neither white space
// nor a line break, which Helm would trim.
func copiedVerbatim(spec []byte) bool {
	if len(spec) == 0 || spec[0] != ' ' || len(bytes.TrimRightFunc(spec, unicode.IsSpace)) != len(spec) {
		return false
	}
	for rest := spec; ; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return true
		}
		rest = rest[i+1:]
		if len(rest) > 0 && rest[0] != ' ' && rest[0] != '\n' {
			return false
		}
	}
}

// copiesCRDSpecs tells whether ch renders its CRDs with the embedded chart's crds.yaml, the
// template whose handling of the spec withoutCRDSpecs relies on.
func copiesCRDSpecs(ch *chart.Chart) bool {
	fsys, err := charts.Kruise()
	if err != nil {
		return false
	}
	want, err := fs.ReadFile(fsys, crdTemplate)
	if err != nil {
		return false
	}
	for _, t := range ch.Templates {
		if t.Name == crdTemplate {
			return bytes.Equal(t.Data, want)
		}
	}
	return false
}

// putBack returns manifest with each placeholder replaced by its spec, or false when a
// placeholder is there more than once. One that is not there is a CRD the values left out.
func (s crdSpecs) putBack(manifest string) (string, bool) {
	type found struct {
		at          int
		placeholder string
	}
	var at []found
	n := len(manifest)
	for placeholder, spec := range s {
		i := strings.Index(manifest, placeholder)
		if i < 0 {
			continue
		}
		if strings.Contains(manifest[i+len(placeholder):], placeholder) {
			return "", false
		}
		at = append(at, found{i, placeholder})
		n += len(spec) - len(placeholder)
	}
	slices.SortFunc(at, func(a, b found) int { return a.at - b.at })
	var out strings.Builder
	out.Grow(n)
	last := 0
	for _, f := range at {
		out.WriteString(manifest[last:f.at])
		out.Write(s[f.placeholder])
		last = f.at + len(f.placeholder)
	}
	out.WriteString(manifest[last:])
	return out.String(), true
}
