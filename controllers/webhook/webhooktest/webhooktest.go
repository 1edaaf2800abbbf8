package webhooktest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Operations are the admission operations a fuzz input picks from by its op byte.
var Operations = []admissionv1.Operation{admissionv1.Create, admissionv1.Update, admissionv1.Delete, admissionv1.Connect}

// Request builds the admission request the apiserver would send for obj (and old, on update and
// delete) in namespace ns.
func Request(op admissionv1.Operation, ns string, obj, old []byte) admission.Request {
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "fuzz", Operation: op, Namespace: ns, Name: "fuzz",
		Object: k8sruntime.RawExtension{Raw: obj}, OldObject: k8sruntime.RawExtension{Raw: old},
	}}
	if op == admissionv1.Delete {
		req.Object = k8sruntime.RawExtension{}
	}
	return req
}

// Reachable tells whether the webhook server could hand req to a handler: the objects arrive
// inside the AdmissionReview's JSON, so each is empty or one valid JSON document. Inputs that
// are not (YAML, truncated bytes) are stopped by the server before any handler runs.
func Reachable(req admission.Request) bool {
	for _, raw := range [][]byte{req.Object.Raw, req.OldObject.Raw} {
		if len(raw) > 0 && !json.Valid(raw) {
			return false
		}
	}
	return true
}

// allowedCodes are the status codes a handler may refuse with: bad request (undecodable),
// forbidden (gated off or protected), unprocessable (invalid). A 500 means the handler could not
// decide, which for pure input is a bug.
var allowedCodes = map[int32]bool{http.StatusBadRequest: true, http.StatusForbidden: true, http.StatusUnprocessableEntity: true}

// Check runs h on req and returns an error when the answer is malformed: a refusal without a
// known code or message, an unexpected 500, or patches that do not apply to the object or leave
// invalid JSON. A panic in h is left to crash the fuzz target, which is what it looks for.
func Check(ctx context.Context, h admission.Handler, req admission.Request) (admission.Response, error) {
	resp := h.Handle(ctx, req)
	if !resp.Allowed {
		if resp.Result == nil {
			return resp, fmt.Errorf("refusal without a status")
		}
		if !allowedCodes[resp.Result.Code] {
			return resp, fmt.Errorf("refused with code %d: %s", resp.Result.Code, resp.Result.Message)
		}
		if strings.TrimSpace(resp.Result.Message) == "" {
			return resp, fmt.Errorf("refused with code %d and no message", resp.Result.Code)
		}
		if len(resp.Patches) > 0 {
			return resp, fmt.Errorf("refusal carries %d patches", len(resp.Patches))
		}
		return resp, nil
	}
	if len(resp.Patches) == 0 {
		return resp, nil
	}
	patched, err := Apply(req.Object.Raw, resp)
	if err != nil {
		return resp, err
	}
	if !json.Valid(patched) {
		return resp, fmt.Errorf("patched object is not valid JSON")
	}
	return resp, nil
}

// Apply applies the response's patches to obj.
func Apply(obj []byte, resp admission.Response) ([]byte, error) {
	raw, err := json.Marshal(resp.Patches)
	if err != nil {
		return nil, fmt.Errorf("encode patches: %w", err)
	}
	p, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, fmt.Errorf("decode patches: %w", err)
	}
	out, err := p.Apply(obj)
	if err != nil {
		return nil, fmt.Errorf("apply patches %s: %w", raw, err)
	}
	return out, nil
}

// Samples returns, as JSON, every document of the named files under
// test/integration/testdata/samples, for use as fuzz seeds.
func Samples(files ...string) ([][]byte, error) {
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(self), "..", "..", "..", "test", "integration", "testdata", "samples")
	var out [][]byte
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if doc == nil {
				continue
			}
			b, err := json.Marshal(doc)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// CheckIdempotent runs h again on the object that resp's patches make of req's, as the
// apiserver may (reinvocation), and returns an error unless that second answer allows the
// object unchanged: a defaulting webhook's patches must settle after one round.
func CheckIdempotent(ctx context.Context, h admission.Handler, req admission.Request, resp admission.Response) error {
	if !resp.Allowed || len(resp.Patches) == 0 {
		return nil
	}
	patched, err := Apply(req.Object.Raw, resp)
	if err != nil {
		return err
	}
	req.Object.Raw = patched
	again, err := Check(ctx, h, req)
	if err != nil {
		return fmt.Errorf("on the patched object: %w", err)
	}
	if !again.Allowed || len(again.Patches) > 0 {
		return fmt.Errorf("not idempotent: the patched object got %d more patches (%v), allowed %v", len(again.Patches), again.Patches, again.Allowed)
	}
	return nil
}
