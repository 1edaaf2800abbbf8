package webhooktest

import (
	"sort"
	"testing"

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
