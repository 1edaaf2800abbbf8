package uniteddeployment

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kruise-addon/kruise-addon/controllers/cloneset"
	"github.com/kruise-addon/kruise-addon/controllers/manager"
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
		Name:             "uniteddeployment",
		ManagerNamespace: true,
		LogVerbosity:     2,
		Setup:            startShared,
	}))
}

// startShared starts kube-scheduler and kube-controller-manager, the simulated nodes, and a
// manager running the UnitedDeployment, CloneSet and Advanced StatefulSet controllers and
// webhooks.
func startShared(ctx context.Context, e *framework.Env, log string) (func(), error) {
	env = e
	var stops []func()
	teardown := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if err := env.StartKubeControllers(ctx); err != nil {
		return teardown, fmt.Errorf("start kube-scheduler and kube-controller-manager: %w", err)
	}
	var err error
	sim, err = framework.StartNodeSimulator(ctx, env, framework.WithoutScheduler(),
		framework.WithNodes(
			builder.Node("a-0").Zone(zoneA).Capacity("64", "256Gi", 200).Obj(),
			builder.Node("a-1").Zone(zoneA).Capacity("64", "256Gi", 200).Obj(),
			builder.Node("b-0").Zone(zoneB).Capacity("64", "256Gi", 200).Obj(),
			builder.Node("b-1").Zone(zoneB).Capacity("64", "256Gi", 200).Obj(),
			builder.Node("c-0").Zone(zoneC).Capacity("64", "256Gi", 200).Obj(),
			builder.Node("small-0").Zone(zoneSmall).Capacity("64", "256Gi", smallZonePods).Obj(),
		),
		framework.WithStartDelay(100*time.Millisecond),
		framework.WithReadyDelay(200*time.Millisecond),
		framework.WithImageChangeDelay(200*time.Millisecond),
		framework.WithTerminationDelay(100*time.Millisecond),
	)
	if err != nil {
		return teardown, fmt.Errorf("start node simulator: %w", err)
	}
	stops = append(stops, sim.Stop)

	o, err := harness.LoopbackOptions(env.Dir, harness.ManagerNamespace)
	if err != nil {
		return teardown, err
	}
	o.Controllers = []manager.Component{
		{Name: uniteddeployment.Name, Setup: uniteddeployment.SetupWithManager},
		{Name: cloneset.Name, Setup: cloneset.SetupWithManager},
		{Name: statefulset.Name, Setup: statefulset.SetupWithManager},
		// It gives new pods their first InPlaceUpdateReady condition.
		{Name: podreadiness.Name, Setup: podreadiness.SetupWithManager},
	}
	o.Webhooks = []setup.Webhooks{uniteddeploymentwebhook.Handlers, clonesetwebhook.Handlers, statefulsetwebhook.Handlers}
	o.Workers = map[string]int{uniteddeployment.Name: 3, cloneset.Name: 3, statefulset.Name: 3}
	mgr := harness.Start(ctx, env.Config, "manager", o)
	stops = append(stops, mgr.Stop)
	if err := harness.RegisterWebhooks(ctx, env.Client, harness.ManagerNamespace, o.WebhookPort); err != nil {
		return teardown, fmt.Errorf("register webhooks: %w", err)
	}
	if err := mgr.WaitReady(ctx, framework.Long); err != nil {
		return teardown, fmt.Errorf("manager not ready (log: %s): %w", log, err)
	}
	if err := harness.WaitForCABundle(ctx, env.Client, framework.Long); err != nil {
		return teardown, fmt.Errorf("webhook caBundle not patched (log: %s): %w", log, err)
	}
	return teardown, nil
}
