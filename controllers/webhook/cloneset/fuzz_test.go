package cloneset

import (
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
	webhooktest.SeedSamples(f, true, "clonesets.yaml")
	f.Add(uint8(0), []byte(`{"spec":{"replicas":-1,"updateStrategy":{"maxSurge":"101%","partition":"x"}}}`), []byte(nil))
	f.Add(uint8(1), []byte(`{"metadata":{"name":"web"},"spec":{"scaleStrategy":{"podsToDelete":["web-a","web-a",""]}}}`), []byte(`{}`))
}

// FuzzMutatingCloneSet feeds arbitrary objects to the CloneSet defaulting webhook: it must never
// panic, must answer with a known code or patches that apply, and defaulting must be idempotent
// (the apiserver may call it again on its own output).
func FuzzMutatingCloneSet(f *testing.F) {
	addSeeds(f)
	webhooktest.Fuzz(f, NewMutatingHandler(admission.NewDecoder(apis.NewScheme()), features.NewGate()), webhooktest.Idempotent)
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
	webhooktest.Fuzz(f, h, webhooktest.Stable)
}
