package statefulset

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/statefulset"
	statefulsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/statefulset"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
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
		ManagerNamespace:      true,
		CacheMutationDetector: true,
		WithoutDetector:       []string{"TestHugeReplicasAdvancedStatefulSetKeepsTheManagersMemoryBounded"},
		LogVerbosity:          2,
		Setup:                 startShared,
	}))
}

// startShared starts three simulated nodes and a manager running the StatefulSet controller
// and webhooks, and waits until the webhooks are served.
func startShared(ctx context.Context, e *framework.Env, log string) (func(), error) {
	env = e
	var stops []func()
	teardown := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	var err error
	sim, err = framework.StartNodeSimulator(ctx, env,
		framework.WithNodes(
			builder.Node("node-0").Capacity("64", "256Gi", 500).Obj(),
			builder.Node("node-1").Capacity("64", "256Gi", 500).Obj(),
			builder.Node("node-2").Capacity("64", "256Gi", 500).Obj(),
		),
		framework.WithStartDelay(100*time.Millisecond),
		framework.WithReadyDelay(300*time.Millisecond),
		framework.WithImageChangeDelay(300*time.Millisecond),
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
	// The pod readiness controller gives new pods their first InPlaceUpdateReady condition.
	o.Controllers = []manager.Component{
		{Name: statefulset.Name, Setup: statefulset.SetupWithManager},
		{Name: podreadiness.Name, Setup: podreadiness.SetupWithManager},
	}
	o.Webhooks = []setup.Webhooks{statefulsetwebhook.Handlers}
	o.Workers = map[string]int{statefulset.Name: 3}
	// Pre-download is off by default (as in 1.8); the suite turns it on to test it. No pull-job
	// controller runs here, so the jobs are only created and deleted.
	if err := o.Gates.Set(string(features.StatefulSetStartOrdinal) + "=true," + string(features.PreDownloadImageForInPlaceUpdate) + "=true"); err != nil {
		return teardown, err
	}
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
