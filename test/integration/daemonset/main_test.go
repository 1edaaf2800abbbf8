package daemonset

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-addon/kruise-addon/controllers/daemonset"
	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	daemonsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/daemonset"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// baseNodes is how many simulated nodes every test starts with.
const baseNodes = 4

var (
	// env and sim are set once in TestMain and only read afterwards.
	env *framework.Env
	sim *framework.NodeSimulator
)

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{
		Name:                  "daemonset",
		ManagerNamespace:      true,
		CacheMutationDetector: true,
		LogVerbosity:          4,
		Setup:                 startShared,
	}))
}

// startShared starts the simulated nodes, the real kube-scheduler that places the daemon pods,
// the garbage collector, and the manager with the DaemonSet controller and webhooks.
func startShared(ctx context.Context, e *framework.Env, log string) (func(), error) {
	env = e
	var stops []func()
	teardown := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	var nodes []*corev1.Node
	for i := range baseNodes {
		nodes = append(nodes, builder.Node(fmt.Sprintf("node-%d", i)).Obj())
	}
	var err error
	sim, err = framework.StartNodeSimulator(ctx, env,
		framework.WithoutScheduler(),
		framework.WithNodes(nodes...),
		framework.WithStartDelay(100*time.Millisecond),
		framework.WithReadyDelay(300*time.Millisecond),
		framework.WithImageChangeDelay(300*time.Millisecond),
		framework.WithTerminationDelay(100*time.Millisecond),
	)
	if err != nil {
		return teardown, fmt.Errorf("start node simulator: %w", err)
	}
	stops = append(stops, sim.Stop)
	// After the nodes: the simulator writes their status once. The garbage collector removes
	// a deleted DaemonSet's pods, as in a cluster.
	if err := env.StartKubeControllers(ctx, framework.WithControllers("garbage-collector-controller")); err != nil {
		return teardown, fmt.Errorf("start kube-scheduler and the garbage collector: %w", err)
	}

	o, err := harness.LoopbackOptions(env.Dir, harness.ManagerNamespace)
	if err != nil {
		return teardown, err
	}
	// The pod readiness controller gives new pods their first InPlaceUpdateReady condition.
	o.Controllers = []manager.Component{
		{Name: daemonset.Name, Setup: daemonset.SetupWithManager},
		{Name: podreadiness.Name, Setup: podreadiness.SetupWithManager},
	}
	o.Webhooks = []setup.Webhooks{daemonsetwebhook.Handlers}
	o.Workers = map[string]int{daemonset.Name: 3}
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

// baseNodeNames are the names of the nodes every test starts with, sorted.
func baseNodeNames() []string {
	var out []string
	for i := range baseNodes {
		out = append(out, fmt.Sprintf("node-%d", i))
	}
	return out
}
