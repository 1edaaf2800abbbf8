package cloneset

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/features"
)

// addSeeds gives a CloneSet fuzz target the sample CloneSets as create and update inputs.
func addSeeds(f *testing.F) {
	samples, err := webhooktest.Samples("clonesets.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range samples {
		f.Add(uint8(0), s, []byte(nil))
		f.Add(uint8(1), s, s)
		f.Add(uint8(2), []byte(nil), s)
	}
	f.Add(uint8(0), []byte(`{"spec":{"replicas":-1,"updateStrategy":{"maxSurge":"101%","partition":"x"}}}`), []byte(nil))
	f.Add(uint8(1), []byte(`{"metadata":{"name":"web"},"spec":{"scaleStrategy":{"podsToDelete":["web-a","web-a",""]}}}`), []byte(`{}`))
}

// FuzzMutatingCloneSet feeds arbitrary objects to the CloneSet defaulting webhook: it must never
// panic, must answer with a known code or patches that apply, and defaulting must be idempotent
// (the apiserver may call it again on its own output).
func FuzzMutatingCloneSet(f *testing.F) {
	addSeeds(f)
	dec := admission.NewDecoder(apis.NewScheme())
	h := NewMutatingHandler(dec, features.NewGate())
	f.Fuzz(func(t *testing.T, op uint8, obj, old []byte) {
		req := webhooktest.Request(webhooktest.Operations[int(op)%len(webhooktest.Operations)], "ns", obj, old)
		if !webhooktest.Reachable(req) {
			return
		}
		resp, err := webhooktest.Check(context.Background(), h, req)
		if err != nil {
			t.Fatal(err)
		}
		if err := webhooktest.CheckIdempotent(context.Background(), h, req, resp); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzValidatingCloneSet feeds arbitrary objects to the CloneSet validating webhook: it must
// never panic, must answer with a known code and a message, and must answer the same twice.
func FuzzValidatingCloneSet(f *testing.F) {
	addSeeds(f)
	scheme := apis.NewScheme()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-a", Namespace: "ns"}}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(pod).Build()
	gates := features.NewGate()
	h := NewValidatingHandler(admission.NewDecoder(scheme), reader, reader, gates, deletionprotection.NewGuard(gates, nil, false))
	f.Fuzz(func(t *testing.T, op uint8, obj, old []byte) {
		req := webhooktest.Request(webhooktest.Operations[int(op)%len(webhooktest.Operations)], "ns", obj, old)
		if !webhooktest.Reachable(req) {
			return
		}
		first, err := webhooktest.Check(context.Background(), h, req)
		if err != nil {
			t.Fatal(err)
		}
		second, _ := webhooktest.Check(context.Background(), h, req)
		if first.Allowed != second.Allowed || first.Result.Code != second.Result.Code {
			t.Fatalf("two answers for one request: %v/%d then %v/%d", first.Allowed, first.Result.Code, second.Allowed, second.Result.Code)
		}
	})
}
