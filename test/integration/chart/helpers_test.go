package chart

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/versions"
)

type metav1LabelSelector = metav1.LabelSelector

func itoa(i int32) string { return strconv.Itoa(int(i)) }

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

// quantityCmp compares quantities by value, not by how they were written.
var quantityCmp = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

func currentAddon(t interface{ Helper() }) string {
	t.Helper()
	return versions.Current().Addon
}

// generatedCRDs decodes charts/kruise/files/crds, the files `make manifests` writes.
func generatedCRDs(t *testing.T) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(framework.CRDDir(), "*.yaml"))
	if err != nil {
		t.Fatalf("glob CRDs: %v", err)
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, p := range paths {
		objs, err := decodeAll(string(readFile(t, p)))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, o := range objs {
			if c, ok := o.(*apiextensionsv1.CustomResourceDefinition); ok {
				out = append(out, c)
			}
		}
	}
	return out
}
