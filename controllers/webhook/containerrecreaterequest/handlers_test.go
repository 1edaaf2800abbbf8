package containerrecreaterequest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/features"
)

func TestHandle(t *testing.T) {
	gateOff := features.NewGate()
	if err := gateOff.Set(string(features.KruiseDaemon) + "=false"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		gates       featuregate.FeatureGate
		op          admissionv1.Operation
		withPod     bool
		wantAllowed bool
		wantCode    int32
		wantPatched bool
	}{
		{name: "a create for a running pod is allowed with a patch", op: admissionv1.Create, withPod: true, wantAllowed: true, wantCode: 200, wantPatched: true},
		{name: "a create for a missing pod is refused as a bad request", op: admissionv1.Create, wantCode: 400},
		{name: "every request is refused while KruiseDaemon is off", gates: gateOff, op: admissionv1.Create, withPod: true, wantCode: 403},
		{name: "an update that keeps the spec is allowed", op: admissionv1.Update, wantAllowed: true, wantCode: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scheme := apis.NewScheme()
			b := fake.NewClientBuilder().WithScheme(scheme)
			if tt.withPod {
				b = b.WithObjects(runningPod())
			}
			h := NewMutatingHandler(admission.NewDecoder(scheme), b.Build(), tt.gates)
			raw := mustJSON(t, request("app"))
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: tt.op, Namespace: "ns", Object: runtime.RawExtension{Raw: raw},
			}}
			if tt.op == admissionv1.Update {
				req.OldObject = runtime.RawExtension{Raw: raw}
			}
			resp := h.Handle(context.Background(), req)
			want := []any{tt.wantAllowed, tt.wantCode, tt.wantPatched}
			code := int32(200)
			if resp.Result != nil && resp.Result.Code != 0 {
				code = resp.Result.Code
			}
			got := []any{resp.Allowed, code, len(resp.Patches) > 0}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("allowed, code, patched (-want +got):\n%s\nresult: %+v", diff, resp.Result)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
