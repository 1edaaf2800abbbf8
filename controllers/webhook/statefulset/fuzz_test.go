package statefulset

import (
	"context"
	"testing"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/features"
)

// addSeeds gives a StatefulSet fuzz target the sample StatefulSets of both versions as create
// and update inputs.
func addSeeds(f *testing.F) {
	samples, err := webhooktest.Samples("statefulsets.yaml", "statefulsets-v1alpha1.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range samples {
		f.Add(uint8(0), s, []byte(nil))
		f.Add(uint8(1), s, s)
		f.Add(uint8(2), []byte(nil), s)
	}
	f.Add(uint8(0), []byte(`{"spec":{"replicas":-1,"reserveOrdinals":["9-1",-3,"x"],"updateStrategy":{"rollingUpdate":{"maxUnavailable":"0%"}}}}`), []byte(nil))
	f.Add(uint8(1), []byte(`{"metadata":{"name":"web"},"spec":{"updateStrategy":{"type":"OnDelete","rollingUpdate":{}}}}`), []byte(`{}`))
}

// FuzzMutatingStatefulSet feeds arbitrary objects to the StatefulSet defaulting webhook: it must
// never panic, must answer with a known code or patches that apply, and defaulting must be
// idempotent.
func FuzzMutatingStatefulSet(f *testing.F) {
	addSeeds(f)
	h := mutatingHandler(features.NewGate())
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

// FuzzValidatingStatefulSet feeds arbitrary objects to the StatefulSet validating webhook: it
// must never panic, must answer with a known code and a message, and must answer the same twice.
func FuzzValidatingStatefulSet(f *testing.F) {
	addSeeds(f)
	h := validatingHandler(deletionprotection.NewGuard(features.NewGate(), nil, false))
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
