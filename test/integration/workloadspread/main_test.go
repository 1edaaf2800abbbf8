package workloadspread

import (
	"os"
	"testing"
	"time"

	"github.com/kruise-addon/kruise-addon/controllers/cloneset"
	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/statefulset"
	clonesetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/cloneset"
	podwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/pod"
	statefulsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/statefulset"
	wswebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/workloadspread"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread/placement"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// zones are the simulated zones, two nodes each.
var zones = []string{"zone-a", "zone-b", "zone-c"}

// env is set once in TestMain and only read afterwards.
var env *framework.Env

func TestMain(m *testing.M) {
	placementStep, placementCheck := placement.Steps()
	// kube-controller-manager runs Deployments and ReplicaSets (no Job controller, so the
	// tests' Jobs are only owners).
	os.Exit(harness.Main(m, harness.Suite{
		Name:            "workloadspread",
		LogVerbosity:    4,
		Nodes:           harness.Nodes(6, zones...),
		Simulator:       harness.PodTiming(100*time.Millisecond, 300*time.Millisecond, 500*time.Millisecond, 100*time.Millisecond),
		KubeControllers: "deployment-controller,replicaset-controller",
		// The manager runs the CloneSet, Advanced StatefulSet, pod readiness and WorkloadSpread
		// controllers and their webhooks.
		Controllers: harness.Controllers(cloneset.Name, podreadiness.Name, statefulset.Name, workloadspread.Name),
		Webhooks:    []setup.Webhooks{clonesetwebhook.Handlers, statefulsetwebhook.Handlers, podwebhook.Handlers(placementStep), podwebhook.ValidatingHandlers(placementCheck), wswebhook.Handlers},
		Workers:     map[string]int{cloneset.Name: 3, podreadiness.Name: 3, statefulset.Name: 3, workloadspread.Name: 3},
		Env:         &env,
	}))
}
