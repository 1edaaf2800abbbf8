package pod

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/features"
)

// FuzzMutatingPod feeds arbitrary pods to the pod webhook, which sees every pod in the cluster:
// it must never panic, must answer with a known code or patches that apply, and its readiness
// gates must be added once (a pod it already mutated gets no more patches).
func FuzzMutatingPod(f *testing.F) {
	f.Add(uint8(0), []byte(`{"metadata":{"name":"web-a","ownerReferences":[{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":"web","uid":"u","controller":true}]},"spec":{"containers":[{"name":"main","image":"nginx"}]}}`))
	f.Add(uint8(0), []byte(`{"metadata":{"name":"web-b","labels":{"apps.kruise.io/cloneset-instance-id":"b"}},"spec":{"readinessGates":[{"conditionType":"InPlaceUpdateReady"}],"containers":[]}}`))
	f.Add(uint8(0), []byte(`{"metadata":{"ownerReferences":[{"apiVersion":"apps.kruise.io/v1beta1","kind":"StatefulSet","controller":true}]},"spec":{"readinessGates":null}}`))
	f.Add(uint8(1), []byte(`{}`))
	f.Add(uint8(0), []byte(`{"spec":{"containers":"nope"}}`))
	gates := features.NewGate()
	if err := gates.Set(string(features.KruisePodReadinessGate) + "=true"); err != nil {
		f.Fatal(err)
	}
	webhooktest.FuzzObject(f, NewMutatingHandler(admission.NewDecoder(apis.NewScheme()), gates), webhooktest.Idempotent)
}
