package sidecarset

import (
	"os"
	"testing"
	"time"

	"k8s.io/component-base/featuregate"

	"github.com/kruise-addon/kruise-addon/controllers/launchpriority"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
	podwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/pod"
	sidecarsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/sidecarset"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

var (
	// env and sim are set once in TestMain and only read afterwards.
	env *framework.Env
	sim *framework.NodeSimulator
)

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{
		Name:         "sidecarset",
		LogVerbosity: 2,
		Nodes:        harness.Nodes(3),
		Simulator:    harness.PodTiming(100*time.Millisecond, 300*time.Millisecond, 500*time.Millisecond, 100*time.Millisecond),
		// The manager runs the SidecarSet and container launch priority controllers, the SidecarSet
		// webhooks and the pod webhook with both their steps.
		Controllers: harness.Controllers(sidecarset.Name, launchpriority.Name),
		Webhooks:    []setup.Webhooks{sidecarsetwebhook.Handlers, podwebhook.Handlers(inject.StepFactory, launchpriority.StepFactory)},
		Workers:     map[string]int{sidecarset.Name: 3, launchpriority.Name: 2},
		Gates:       []featuregate.Feature{features.SidecarSetPatchPodMetadataDefaultsAllowed},
		Env:         &env,
		Sim:         &sim,
	}))
}
