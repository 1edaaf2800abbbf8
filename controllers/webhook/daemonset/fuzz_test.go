package daemonset

import (
	"testing"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

// seeds are the sample DaemonSets as create and update inputs, and two broken ones.
var seeds = webhooktest.Seeds{Files: []string{"daemonsets.yaml"}, Deletes: true, Inputs: []webhooktest.Input{
	{Op: 0, Obj: `{"spec":{"burstReplicas":"x","updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"rollingUpdateType":"Surging","maxSurge":"101%","partition":-1}}}}`},
	{Op: 1, Obj: `{"metadata":{"name":"a"},"spec":{"selector":{"matchLabels":{"a":"b"}},"updateStrategy":{"type":"OnDelete"}}}`, Old: `{"spec":{"selector":{}}}`},
}}

// FuzzMutatingDaemonSet feeds arbitrary objects to the DaemonSet defaulting webhook: it must
// never panic, must answer with a known code or patches that apply, and defaulting must be
// idempotent (the apiserver may call it again on its own output).
func FuzzMutatingDaemonSet(f *testing.F) {
	seeds.Add(f)
	webhooktest.Fuzz(f, NewMutatingHandler(webhooktest.Decoder()), webhooktest.Idempotent)
}

// FuzzValidatingDaemonSet feeds arbitrary objects to the DaemonSet validating webhook: it must
// never panic, must answer with a known code and a message, and must answer the same twice.
func FuzzValidatingDaemonSet(f *testing.F) {
	seeds.Add(f)
	webhooktest.Fuzz(f, NewValidatingHandler(webhooktest.Decoder()), webhooktest.Stable)
}
