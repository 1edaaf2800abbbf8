package sidecarset

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-addon/kruise-addon/controllers/launchpriority"
	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarset/inject"
	podwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/pod"
	sidecarsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/sidecarset"
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
	os.Exit(harness.Main(m, harness.Suite{Name: "sidecarset", ManagerNamespace: true, LogVerbosity: 2, Setup: setUp}))
}

// setUp starts three simulated nodes and a manager with the SidecarSet and container launch
// priority controllers, the SidecarSet webhooks and the pod webhook with both their steps.
func setUp(ctx context.Context, e *framework.Env, log string) (func(), error) {
	env = e
	var stops []func()
	teardown := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	var nodes []*corev1.Node
	for i := range 3 {
		nodes = append(nodes, builder.Node(fmt.Sprintf("node-%d", i)).Capacity("64", "256Gi", 500).Obj())
	}
	var err error
	sim, err = framework.StartNodeSimulator(ctx, env,
		framework.WithNodes(nodes...),
		framework.WithStartDelay(100*time.Millisecond),
		framework.WithReadyDelay(300*time.Millisecond),
		framework.WithImageChangeDelay(500*time.Millisecond),
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
		{Name: sidecarset.Name, Setup: sidecarset.SetupWithManager},
		{Name: launchpriority.Name, Setup: launchpriority.SetupWithManager},
	}
	o.Webhooks = []setup.Webhooks{sidecarsetwebhook.Handlers, podwebhook.Handlers(inject.StepFactory, launchpriority.StepFactory)}
	o.Workers = map[string]int{sidecarset.Name: 3, launchpriority.Name: 2}
	if err := o.Gates.Set("SidecarSetPatchPodMetadataDefaultsAllowed=true"); err != nil {
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
