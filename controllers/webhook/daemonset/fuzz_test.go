package daemonset

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

// addSeeds gives a DaemonSet fuzz target the sample DaemonSets as create and update inputs.
func addSeeds(f *testing.F) {
	samples, err := webhooktest.Samples("daemonsets.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range samples {
		f.Add(uint8(0), s, []byte(nil))
		f.Add(uint8(1), s, s)
		f.Add(uint8(2), []byte(nil), s)
	}
	f.Add(uint8(0), []byte(`{"spec":{"burstReplicas":"x","updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"rollingUpdateType":"Surging","maxSurge":"101%","partition":-1}}}}`), []byte(nil))
	f.Add(uint8(1), []byte(`{"metadata":{"name":"a"},"spec":{"selector":{"matchLabels":{"a":"b"}},"updateStrategy":{"type":"OnDelete"}}}`), []byte(`{"spec":{"selector":{}}}`))
}

// FuzzMutatingDaemonSet feeds arbitrary objects to the DaemonSet defaulting webhook: it must
// never panic, must answer with a known code or patches that apply, and defaulting must be
// idempotent (the apiserver may call it again on its own output).
func FuzzMutatingDaemonSet(f *testing.F) {
	addSeeds(f)
	h := NewMutatingHandler(admission.NewDecoder(apis.NewScheme()))
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

// FuzzValidatingDaemonSet feeds arbitrary objects to the DaemonSet validating webhook: it must
// never panic, must answer with a known code and a message, and must answer the same twice.
func FuzzValidatingDaemonSet(f *testing.F) {
	addSeeds(f)
	h := NewValidatingHandler(admission.NewDecoder(apis.NewScheme()))
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
