package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/test/framework"
)

func objectKey(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// readN reads the objects of the file at path and fails t unless there are n of them; want says
// what they should be.
func readN(t *testing.T, path string, n int, want string) []*unstructured.Unstructured {
	t.Helper()
	objs := readObjects(t, path)
	if len(objs) != n {
		t.Fatalf("want %s, got %d documents", want, len(objs))
	}
	return objs
}

// readObjects decodes every YAML document in a file.
func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("%s: %v", path, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return objs
}

// place puts a namespaced object into ns and gives every object a name unique to the test,
// so that cluster-scoped samples from different tests cannot collide.
func place(t *testing.T, u *unstructured.Unstructured, ns, suffix string) {
	t.Helper()
	namespaced, err := env.Client.IsObjectNamespaced(u)
	if err != nil {
		t.Fatalf("%s: no such kind on the server: %v", u.GroupVersionKind(), err)
	}
	if namespaced {
		u.SetNamespace(ns)
	}
	u.SetName(u.GetName() + "-" + suffix)
}

func createAndReadBack(t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	in := u.DeepCopy()
	if err := env.Client.Create(ctx, in); err != nil {
		t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), in) })
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(in), got); err != nil {
		t.Fatalf("get %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return got
}

func testdataFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no test data in testdata/%s", dir)
	}
	return files
}

func TestSamplesRoundTripWithNoFieldLost(t *testing.T) {
	createEachAndCompare(t, "samples", 1, "one object in a sample", "rt", "status")
}

func TestSamplesCoverEveryKind(t *testing.T) {
	covered := map[string]bool{}
	for _, f := range testdataFiles(t, "samples") {
		for _, o := range readObjects(t, f) {
			covered[o.GroupVersionKind().GroupKind().String()] = true
		}
	}
	for name, c := range wireContract {
		group := strings.SplitN(name, ".", 2)[1]
		if gk := c.kind + "." + group; !covered[gk] {
			t.Errorf("no sample manifest for %s", gk)
		}
	}
}

func TestSchemaDefaultsAreApplied(t *testing.T) {
	createEachAndCompare(t, "defaults", 2, "a minimal object and its expected defaults", "def", "metadata")
}

// createEachAndCompare runs a subtest per file of testdata/dir holding n objects (what says
// which): it creates the first, named from prefix, and checks the object read back holds every
// field of the last but its top-level field drop.
func createEachAndCompare(t *testing.T, dir string, n int, what, prefix, drop string) {
	ns := framework.NewNamespace(t, env.Client, "it-", nil)
	for _, f := range testdataFiles(t, dir) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			objs := readN(t, f, n, what)
			in, want := objs[0], objs[n-1]
			place(t, in, ns, prefix)
			got := createAndReadBack(t, in)
			delete(want.Object, drop)
			for _, d := range subsetDiff(want.Object, got.Object) {
				t.Errorf("%s", d)
			}
		})
	}
}

func TestInvalidValuesAreRejectedNamingTheField(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "it-", nil)
	for _, f := range testdataFiles(t, "invalid") {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want := wantedMessage(t, f)
			u := readN(t, f, 1, "one object")[0]
			place(t, u, ns, "bad")
			err := env.Client.Create(context.Background(), u)
			if err == nil {
				_ = env.Client.Delete(context.Background(), u)
				t.Fatalf("create succeeded; want it rejected with a message containing %q", want)
			}
			if !apierrors.IsInvalid(err) {
				t.Errorf("want an Invalid (422) error, got %v", err)
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error does not name %q:\n%v", want, err)
			}
		})
	}
}

// wantedMessage reads the "# want: <text>" first line of an invalid-case file.
func wantedMessage(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	if s.Scan() {
		if w, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "# want:"); ok && strings.TrimSpace(w) != "" {
			return strings.TrimSpace(w)
		}
	}
	t.Fatal(fmt.Errorf("%s: the first line must be '# want: <text naming the field>'", path))
	return ""
}
