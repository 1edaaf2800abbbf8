package daemonset

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

// addSeeds gives a DaemonSet fuzz target the sample DaemonSets as create and update inputs.
func addSeeds(f *testing.F) {
	webhooktest.SeedSamples(f, true, "daemonsets.yaml")
	f.Add(uint8(0), []byte(`{"spec":{"burstReplicas":"x","updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"rollingUpdateType":"Surging","maxSurge":"101%","partition":-1}}}}`), []byte(nil))
	f.Add(uint8(1), []byte(`{"metadata":{"name":"a"},"spec":{"selector":{"matchLabels":{"a":"b"}},"updateStrategy":{"type":"OnDelete"}}}`), []byte(`{"spec":{"selector":{}}}`))
}

// FuzzMutatingDaemonSet feeds arbitrary objects to the DaemonSet defaulting webhook: it must
// never panic, must answer with a known code or patches that apply, and defaulting must be
// idempotent (the apiserver may call it again on its own output).
func FuzzMutatingDaemonSet(f *testing.F) {
	addSeeds(f)
	webhooktest.Fuzz(f, NewMutatingHandler(admission.NewDecoder(apis.NewScheme())), webhooktest.Idempotent)
}

// FuzzValidatingDaemonSet feeds arbitrary objects to the DaemonSet validating webhook: it must
// never panic, must answer with a known code and a message, and must answer the same twice.
func FuzzValidatingDaemonSet(f *testing.F) {
	addSeeds(f)
	webhooktest.Fuzz(f, NewValidatingHandler(admission.NewDecoder(apis.NewScheme())), webhooktest.Stable)
}
