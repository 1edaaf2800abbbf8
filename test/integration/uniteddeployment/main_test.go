package uniteddeployment

import (
	"os"
	"testing"
	"time"

	"github.com/kruise-addon/kruise-addon/controllers/cloneset"
	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/statefulset"
	"github.com/kruise-addon/kruise-addon/controllers/uniteddeployment"
	clonesetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/cloneset"
	statefulsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/statefulset"
	uniteddeploymentwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/uniteddeployment"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
	corev1 "k8s.io/api/core/v1"
)

var (
	// env and sim are set once in TestMain and only read afterwards.
	env *framework.Env
	sim *framework.NodeSimulator
)

// Zones of the simulated nodes: three with room for every test, and a small one whose single
// node holds smallZonePods pods.
const (
	zoneA, zoneB, zoneC = "zone-a", "zone-b", "zone-c"
	zoneSmall           = "zone-small"
	smallZonePods       = 2
)

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{
		Name:         "uniteddeployment",
		LogVerbosity: 2,
		Nodes: []*corev1.Node{
			builder.Node("a-0").Zone(zoneA).Capacity("64", "256Gi", 200).Obj(),
			builder.Node("a-1").Zone(zoneA).Capacity("64", "256Gi", 200).Obj(),
			builder.Node("b-0").Zone(zoneB).Capacity("64", "256Gi", 200).Obj(),
			builder.Node("b-1").Zone(zoneB).Capacity("64", "256Gi", 200).Obj(),
			builder.Node("c-0").Zone(zoneC).Capacity("64", "256Gi", 200).Obj(),
			builder.Node("small-0").Zone(zoneSmall).Capacity("64", "256Gi", smallZonePods).Obj(),
		},
		Simulator:       harness.PodTiming(100*time.Millisecond, 200*time.Millisecond, 200*time.Millisecond, 100*time.Millisecond),
		KubeControllers: framework.AllKubeControllers,
		// The manager runs the UnitedDeployment, CloneSet and Advanced StatefulSet controllers and
		// webhooks, and the pod readiness controller, which gives new pods their first
		// InPlaceUpdateReady condition.
		Controllers: harness.Controllers(uniteddeployment.Name, cloneset.Name, statefulset.Name, podreadiness.Name),
		Webhooks:    []setup.Webhooks{uniteddeploymentwebhook.Handlers, clonesetwebhook.Handlers, statefulsetwebhook.Handlers},
		Workers:     map[string]int{uniteddeployment.Name: 3, cloneset.Name: 3, statefulset.Name: 3},
		Env:         &env,
		Sim:         &sim,
	}))
}
