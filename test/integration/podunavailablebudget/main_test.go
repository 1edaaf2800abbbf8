package podunavailablebudget

import (
	"os"
	"testing"

	"k8s.io/component-base/featuregate"

	"github.com/kruise-addon/kruise-addon/controllers/cloneset"
	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/podunavailablebudget"
	"github.com/kruise-addon/kruise-addon/controllers/podunavailablebudget/guard"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
	"github.com/kruise-addon/kruise-addon/controllers/statefulset"
	clonesetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/cloneset"
	podwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/pod"
	pubwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/podunavailablebudget"
	sidecarsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/sidecarset"
	statefulsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/statefulset"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// env and sim are set once in TestMain and only read afterwards.
var (
	env *framework.Env
	sim *framework.NodeSimulator
)

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{
		Name:         "podunavailablebudget",
		LogVerbosity: 3,
		Nodes:        harness.Nodes(3),
		Simulator:    harness.FastPods(),
		// The manager runs the CloneSet, Advanced StatefulSet, SidecarSet, pod readiness and
		// PodUnavailableBudget controllers, their webhooks and the pod webhooks with the sidecar
		// injection, the budget's step and check, with PodUnavailableBudgetUpdateGate on.
		Controllers: harness.Controllers(cloneset.Name, podreadiness.Name, podunavailablebudget.Name, statefulset.Name, sidecarset.Name),
		Webhooks: []setup.Webhooks{
			clonesetwebhook.Handlers,
			statefulsetwebhook.Handlers,
			sidecarsetwebhook.Handlers,
			podwebhook.Handlers(inject.StepFactory, guard.StepFactory),
			podwebhook.ValidatingHandlers(guard.CheckFactory),
			pubwebhook.Handlers,
		},
		Workers: map[string]int{cloneset.Name: 3, podreadiness.Name: 3, podunavailablebudget.Name: 3, statefulset.Name: 3, sidecarset.Name: 2},
		Gates:   []featuregate.Feature{features.PodUnavailableBudgetUpdateGate},
		Env:     &env,
		Sim:     &sim,
	}))
}
