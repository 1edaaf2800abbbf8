package containerrecreaterequest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/features"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

func TestHandle(t *testing.T) {
	gateOff := features.NewGate()
	if err := gateOff.Set(string(features.KruiseDaemon) + "=false"); err != nil {
		t.Fatal(err)
	}
	elsewhere := runningPod()
	elsewhere.Namespace = "other"
	tests := []struct {
		name    string
		gates   featuregate.FeatureGate
		op      admissionv1.Operation
		withPod bool
		// podElsewhere puts a pod of the requested name into namespace "other".
		podElsewhere bool
		// reqNamespace and objNamespace are the request's and the object's namespaces; "ns"
		// when empty, "-" for none.
		reqNamespace, objNamespace string
		wantAllowed                bool
		wantCode                   int32
		wantPatched                bool
		wantMessage                string
		wantReads                  int
	}{
		{name: "a create for a running pod is allowed with a patch", op: admissionv1.Create, withPod: true, wantAllowed: true, wantCode: 200, wantPatched: true, wantReads: 1},
		{name: "a create for a missing pod is refused as a bad request", op: admissionv1.Create, wantCode: 400, wantReads: 1,
			wantMessage: "spec.podName: pod web-0 not found in namespace ns"},
		{name: "a create for a pod that exists only in another namespace is refused as if it did not exist", op: admissionv1.Create, podElsewhere: true, wantCode: 400, wantReads: 1,
			wantMessage: "spec.podName: pod web-0 not found in namespace ns"},
		{name: "an object naming another namespace than the request is refused before any pod is read", op: admissionv1.Create, podElsewhere: true, objNamespace: "other", wantCode: 400,
			wantMessage: `metadata.namespace: Invalid value: "other": must be the namespace of the admission request, "ns"`},
		{name: "a request that names no namespace is refused before any pod is read", op: admissionv1.Create, withPod: true, reqNamespace: "-", wantCode: 400,
			wantMessage: "metadata.namespace: Required value: the admission request must name the object's namespace"},
		{name: "every request is refused while KruiseDaemon is off", gates: gateOff, op: admissionv1.Create, withPod: true, wantCode: 403, wantMessage: "feature-gate KruiseDaemon is not enabled: kruise-daemon is off in this installation (chart value daemon.enabled=false, or kruise-addon --daemon=false); turn it on with daemon.enabled=true (kruise-addon upgrade --daemon=true)"},
		{name: "an update that keeps the spec is allowed", op: admissionv1.Update, wantAllowed: true, wantCode: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scheme := apis.NewScheme()
			b := fake.NewClientBuilder().WithScheme(scheme)
			if tt.withPod {
				b = b.WithObjects(runningPod())
			}
			if tt.podElsewhere {
				b = b.WithObjects(elsewhere)
			}
			reader := &webhooktest.CountingReader{Reader: b.Build()}
			gates := tt.gates
			if gates == nil {
				gates = features.NewGate()
			}
			h := NewMutatingHandler(admission.NewDecoder(scheme), reader, gates)
			ns := func(v string) string {
				switch v {
				case "":
					return "ns"
				case "-":
					return ""
				}
				return v
			}
			crr := request("app")
			crr.Namespace = ns(tt.objNamespace)
			raw := webhooktest.JSON(t, crr)
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: tt.op, Namespace: ns(tt.reqNamespace), Object: runtime.RawExtension{Raw: raw},
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
			msg := ""
			if resp.Result != nil && !resp.Allowed {
				msg = resp.Result.Message
			}
			if diff := cmp.Diff([]any{tt.wantMessage, tt.wantReads}, []any{msg, reader.Reads}); diff != "" {
				t.Errorf("message, pod reads (-want +got):\n%s", diff)
			}
		})
	}
}
