package deletionprotection

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/features"
)

// TestGuardAnswer: what a refused deletion gets, by the Guard's setting and the state of the
// object's namespace.
func TestGuardAnswer(t *testing.T) {
	live := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "live"}}
	going := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "going", DeletionTimestamp: ptr.To(metav1.Now()), Finalizers: []string{"test/hold"}}}
	reader := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(live, going).Build()
	refusal := errors.New("forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always; Deployment going/web: remove the label first")
	cases := map[string]struct {
		allow     bool
		namespace string
		refusal   error
		// wantCode is 0 for allowed.
		wantCode int32
	}{
		"an allowed deletion is allowed":                                      {allow: true, namespace: "going"},
		"by default a refusal stands in a terminating namespace, as in 1.8":   {namespace: "going", refusal: refusal, wantCode: 403},
		"allowed in terminating namespaces, a refusal there goes through":     {allow: true, namespace: "going", refusal: refusal},
		"allowed in terminating namespaces, a refusal in a live one stands":   {allow: true, namespace: "live", refusal: refusal, wantCode: 403},
		"allowed in terminating namespaces, a namespace not found keeps it":   {allow: true, namespace: "gone", refusal: refusal, wantCode: 403},
		"allowed in terminating namespaces, a cluster-scoped object keeps it": {allow: true, refusal: refusal, wantCode: 403},
	}
	gates := features.NewGate()
	if err := gates.Set("ResourcesDeletionProtection=true"); err != nil {
		t.Fatal(err)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewGuard(gates, reader, tc.allow)
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Delete, Namespace: tc.namespace, Name: "web"}}
			resp := g.Answer(context.Background(), req, tc.refusal)
			var got int32
			if !resp.Allowed {
				got = resp.Result.Code
			}
			if diff := cmp.Diff(tc.wantCode, got); diff != "" {
				t.Errorf("code (-want +got):\n%s", diff)
			}
			if got != 0 && resp.Result.Message != refusal.Error() {
				t.Errorf("message %q, want the refusal unchanged %q", resp.Result.Message, refusal)
			}
		})
	}
}
