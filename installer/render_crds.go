package installer

import (
	"fmt"
	"io/fs"
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
type crdSpecs map[string]string

// withoutCRDSpecs returns a copy of ch whose CRD files carry a placeholder instead of their
// spec, and the specs, or ch and no specs when the copy could render differently: when ch's
// crds.yaml is not the one this was written for (which copies each spec, trimmed of its last
// newline, and reads nothing else of it), or for a file whose spec holds a line Helm would take
// for a document separator, does not start with a space, or ends in white space that Helm would
// trim.
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
		head, spec, ok := strings.Cut(string(f.Data), specMark)
		if !ok {
			continue
		}
		spec = strings.TrimSuffix(spec, "\n")
		if !copiedVerbatim(spec) {
			continue
		}
		// Indented, so that Helm reads the document as YAML with a spec, as it would the real one.
		placeholder := fmt.Sprintf("  kruise-addon-crd-spec-%d-of-%d", i, len(ch.Files))
		specs[placeholder] = spec
		files[i] = &chart.File{Name: f.Name, Data: []byte(head + specMark + placeholder + "\n")}
	}
	if len(specs) == 0 {
		return ch, nil
	}
	cp := *ch
	cp.Files = files
	return &cp, specs
}

// copiedVerbatim tells whether Helm's sorter would keep spec, the end of a document, as it is:
// every line is indented under spec:, none starts a document separator (Helm splits on any
// line that starts with ---), and it ends in neither white space nor a line break.
func copiedVerbatim(spec string) bool {
	if spec == "" || strings.Contains("\n"+spec, "\n---") || strings.TrimRightFunc(spec, unicode.IsSpace) != spec {
		return false
	}
	for line := range strings.SplitSeq(spec, "\n") {
		if line != "" && line[0] != ' ' {
			return false
		}
	}
	return true
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
			return string(t.Data) == string(want)
		}
	}
	return false
}

// putBack returns manifest with each placeholder replaced by its spec, or false when a
// placeholder is there more than once. One that is not there is a CRD the values left out.
func (s crdSpecs) putBack(manifest string) (string, bool) {
	n := len(manifest)
	pairs := make([]string, 0, 2*len(s))
	for placeholder, spec := range s {
		switch strings.Count(manifest, placeholder) {
		case 0:
			continue
		case 1:
		default:
			return "", false
		}
		n += len(spec) - len(placeholder)
		pairs = append(pairs, placeholder, spec)
	}
	var out strings.Builder
	out.Grow(n)
	if _, err := strings.NewReplacer(pairs...).WriteString(&out, manifest); err != nil {
		return "", false
	}
	return out.String(), true
}
