package statefulset

import (
	"testing"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/features"
)

// seeds are the sample StatefulSets of both versions as create and update inputs, and two
// broken ones.
var seeds = webhooktest.Seeds{Files: []string{"statefulsets.yaml", "statefulsets-v1alpha1.yaml"}, Deletes: true, Inputs: []webhooktest.Input{
	{Op: 0, Obj: `{"spec":{"replicas":-1,"reserveOrdinals":["9-1",-3,"x"],"updateStrategy":{"rollingUpdate":{"maxUnavailable":"0%"}}}}`},
	{Op: 1, Obj: `{"metadata":{"name":"web"},"spec":{"updateStrategy":{"type":"OnDelete","rollingUpdate":{}}}}`, Old: `{}`},
}}

// FuzzMutatingStatefulSet feeds arbitrary objects to the StatefulSet defaulting webhook: it must
// never panic, must answer with a known code or patches that apply, and defaulting must be
// idempotent.
func FuzzMutatingStatefulSet(f *testing.F) {
	seeds.Add(f)
	webhooktest.Fuzz(f, mutatingHandler(features.NewGate()), webhooktest.Idempotent)
}

// FuzzValidatingStatefulSet feeds arbitrary objects to the StatefulSet validating webhook: it
// must never panic, must answer with a known code and a message, and must answer the same twice.
func FuzzValidatingStatefulSet(f *testing.F) {
	seeds.Add(f)
	webhooktest.Fuzz(f, validatingHandler(deletionprotection.NewGuard(features.NewGate(), nil, false), features.NewGate(), webhooktest.Reader()), webhooktest.Stable)
}
