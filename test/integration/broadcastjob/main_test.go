package broadcastjob

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-addon/kruise-addon/controllers/advancedcronjob"
	"github.com/kruise-addon/kruise-addon/controllers/broadcastjob"
	"github.com/kruise-addon/kruise-addon/controllers/ephemeraljob"
	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	acjwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/advancedcronjob"
	broadcastjobwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/broadcastjob"
	ejobwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/ephemeraljob"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// The suite's nodes: three plain ones and one tainted dedicated=gpu:NoSchedule.
const (
	taintKey     = "dedicated"
	taintValue   = "gpu"
	taintedNode  = "node-gpu"
	plainNodes   = 3
	allNodeCount = plainNodes + 1
)

var (
	// env and sim are set once in TestMain and only read afterwards.
	env *framework.Env
	sim *framework.NodeSimulator
)

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{
		Name:             "broadcastjob",
		ManagerNamespace: true,
		LogVerbosity:     4,
		Setup:            startShared,
	}))
}

// startShared starts the simulated nodes and the manager with the BroadcastJob,
// AdvancedCronJob and EphemeralJob controllers and the webhooks of the three kinds.
func startShared(ctx context.Context, e *framework.Env, log string) (func(), error) {
	env = e
	var stops []func()
	teardown := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	nodes := []*corev1.Node{builder.Node(taintedNode).Taint(taintKey, taintValue, corev1.TaintEffectNoSchedule).Obj()}
	for i := range plainNodes {
		nodes = append(nodes, builder.Node(fmt.Sprintf("node-%d", i)).Obj())
	}
	var err error
	sim, err = framework.StartNodeSimulator(ctx, env,
		framework.WithNodes(nodes...),
		framework.WithStartDelay(100*time.Millisecond),
		framework.WithReadyDelay(200*time.Millisecond),
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
		{Name: broadcastjob.Name, Setup: broadcastjob.SetupWithManager},
		{Name: advancedcronjob.Name, Setup: advancedcronjob.SetupWithManager},
		{Name: ephemeraljob.Name, Setup: ephemeraljob.SetupWithManager},
	}
	o.Webhooks = []setup.Webhooks{broadcastjobwebhook.Handlers, acjwebhook.Handlers, ejobwebhook.Handlers}
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
