package statefulset

import (
	"os"
	"testing"

	"k8s.io/component-base/featuregate"

	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/statefulset"
	statefulsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/statefulset"
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
		Name:                  "statefulset",
		CacheMutationDetector: true,
		WithoutDetector:       []string{"TestHugeReplicasAdvancedStatefulSetKeepsTheManagersMemoryBounded"},
		LogVerbosity:          2,
		Nodes:                 harness.Nodes(3),
		Simulator:             harness.FastPods(),
		// The manager runs the StatefulSet controller and webhooks, and the pod readiness
		// controller, which gives new pods their first InPlaceUpdateReady condition.
		Controllers: harness.Controllers(statefulset.Name, podreadiness.Name),
		Webhooks:    []setup.Webhooks{statefulsetwebhook.Handlers},
		Workers:     map[string]int{statefulset.Name: 3},
		// Pre-download, PVC resizing and in-place vertical scaling are off by default (as in 1.8);
		// the suite turns them on to test them. No pull-job controller runs here, so the jobs are
		// only created and deleted.
		Gates: []featuregate.Feature{features.StatefulSetStartOrdinal, features.PreDownloadImageForInPlaceUpdate,
			features.StatefulSetAutoResizePVCGate, features.InPlaceWorkloadVerticalScaling},
		Env: &env,
		Sim: &sim,
	}))
}
