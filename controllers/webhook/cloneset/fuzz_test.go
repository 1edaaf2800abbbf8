package cloneset

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/features"
)

// seeds are the sample CloneSets as create and update inputs, and two broken ones.
var seeds = webhooktest.Seeds{Files: []string{"clonesets.yaml"}, Deletes: true, Inputs: []webhooktest.Input{
	{Op: 0, Obj: `{"spec":{"replicas":-1,"updateStrategy":{"maxSurge":"101%","partition":"x"}}}`},
	{Op: 1, Obj: `{"metadata":{"name":"web"},"spec":{"scaleStrategy":{"podsToDelete":["web-a","web-a",""]}}}`, Old: `{}`},
}}

// FuzzMutatingCloneSet feeds arbitrary objects to the CloneSet defaulting webhook: it must never
// panic, must answer with a known code or patches that apply, and defaulting must be idempotent
// (the apiserver may call it again on its own output).
func FuzzMutatingCloneSet(f *testing.F) {
	seeds.Add(f)
	webhooktest.Fuzz(f, NewMutatingHandler(webhooktest.Decoder(), features.NewGate()), webhooktest.Idempotent)
}

// FuzzValidatingCloneSet feeds arbitrary objects to the CloneSet validating webhook: it must
// never panic, must answer with a known code and a message, and must answer the same twice.
func FuzzValidatingCloneSet(f *testing.F) {
	seeds.Add(f)
	reader := webhooktest.Reader(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-a", Namespace: "ns"}})
	gates := features.NewGate()
	h := NewValidatingHandler(webhooktest.Decoder(), reader, reader, gates, deletionprotection.NewGuard(gates, nil, false))
	webhooktest.Fuzz(f, h, webhooktest.Stable)
}
