package statefulset

import (
	"testing"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/features"
)

// addSeeds gives a StatefulSet fuzz target the sample StatefulSets of both versions as create
// and update inputs.
func addSeeds(f *testing.F) {
	webhooktest.SeedSamples(f, true, "statefulsets.yaml", "statefulsets-v1alpha1.yaml")
	f.Add(uint8(0), []byte(`{"spec":{"replicas":-1,"reserveOrdinals":["9-1",-3,"x"],"updateStrategy":{"rollingUpdate":{"maxUnavailable":"0%"}}}}`), []byte(nil))
	f.Add(uint8(1), []byte(`{"metadata":{"name":"web"},"spec":{"updateStrategy":{"type":"OnDelete","rollingUpdate":{}}}}`), []byte(`{}`))
}

// FuzzMutatingStatefulSet feeds arbitrary objects to the StatefulSet defaulting webhook: it must
// never panic, must answer with a known code or patches that apply, and defaulting must be
// idempotent.
func FuzzMutatingStatefulSet(f *testing.F) {
	addSeeds(f)
	webhooktest.Fuzz(f, mutatingHandler(features.NewGate()), webhooktest.Idempotent)
}

// FuzzValidatingStatefulSet feeds arbitrary objects to the StatefulSet validating webhook: it
// must never panic, must answer with a known code and a message, and must answer the same twice.
func FuzzValidatingStatefulSet(f *testing.F) {
	addSeeds(f)
	webhooktest.Fuzz(f, validatingHandler(deletionprotection.NewGuard(features.NewGate(), nil, false)), webhooktest.Stable)
}
