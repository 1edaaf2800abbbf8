package webhooktest

import (
	"context"

	"github.com/google/go-cmp/cmp"
	"k8s.io/component-base/featuregate"

	"sort"
	"testing"

	"github.com/kruise-addon/kruise-addon/features"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// ObjectRequest is Request for typed objects: op on obj named "web" in namespace "ns", with old
// as the stored object (nil for none).
func ObjectRequest(t testing.TB, op admissionv1.Operation, obj, old runtime.Object) admission.Request {
	t.Helper()
	raw := func(o runtime.Object) []byte {
		if o == nil {
			return nil
		}
		return JSON(t, o)
	}
	req := Request(op, "ns", raw(obj), raw(old))
	req.Name = "web"
	return req
}

// PatchedPaths lists, sorted, the operations and paths of a mutating answer's patches, as
// "add /spec/replicas".
func PatchedPaths(patches []jsonpatch.JsonPatchOperation) []string {
	var out []string
	for _, p := range patches {
		out = append(out, p.Operation+" "+p.Path)
	}
	sort.Strings(out)
	return out
}

// Gates is a gate set with set applied ("A=true,B=false"; "" leaves 1.8's defaults).
func Gates(t testing.TB, set string) featuregate.FeatureGate {
	t.Helper()
	g := features.NewGate()
	if set != "" {
		if err := g.Set(set); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// AssertPatches runs the defaulting handler h on op of obj (old the stored object, nil for
// none) and checks that it allows it with exactly the patches want (PatchedPaths form, sorted).
func AssertPatches(t testing.TB, h admission.Handler, op admissionv1.Operation, obj, old runtime.Object, want []string) {
	t.Helper()
	resp := h.Handle(context.Background(), ObjectRequest(t, op, obj, old))
	if !resp.Allowed {
		t.Fatalf("not allowed: %v", resp.Result)
	}
	if diff := cmp.Diff(want, PatchedPaths(resp.Patches)); diff != "" {
		t.Errorf("patches (-want +got):\n%s", diff)
	}
}
