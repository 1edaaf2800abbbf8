package persistentpodstate

import (
	"os"
	"testing"
	"time"

	"github.com/kruise-addon/kruise-addon/controllers/persistentpodstate"
	"github.com/kruise-addon/kruise-addon/controllers/persistentpodstate/restore"
	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/statefulset"
	ppswebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/persistentpodstate"
	podwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/pod"
	statefulsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/statefulset"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// zones are the simulated zones, two nodes each.
var zones = []string{"zone-a", "zone-b", "zone-c"}

// env is set once in TestMain and only read afterwards.
var env *framework.Env

func TestMain(m *testing.M) {
	// kube-controller-manager's StatefulSet controller runs the apps/v1 StatefulSets. Deleted
	// pods go in 100ms rather than after their grace period, so recreations are quick.
	os.Exit(harness.Main(m, harness.Suite{
		Name:            "persistentpodstate",
		LogVerbosity:    4,
		Nodes:           harness.Nodes(6, zones...),
		Simulator:       []framework.SimOption{framework.WithTerminationDelay(100 * time.Millisecond)},
		KubeControllers: framework.AllKubeControllers,
		// The manager runs the Advanced StatefulSet, pod readiness and PersistentPodState
		// controllers, the StatefulSet and PersistentPodState webhooks and /mutate-pod with the
		// PersistentPodState step.
		Controllers: harness.Controllers(podreadiness.Name, statefulset.Name, persistentpodstate.Name),
		Webhooks:    []setup.Webhooks{statefulsetwebhook.Handlers, podwebhook.Handlers(restore.StepFactory), ppswebhook.Handlers},
		Env:         &env,
	}))
}
