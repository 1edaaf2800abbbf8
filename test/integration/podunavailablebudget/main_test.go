package podunavailablebudget

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-addon/kruise-addon/controllers/cloneset"
	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/podunavailablebudget"
	"github.com/kruise-addon/kruise-addon/controllers/podunavailablebudget/podhook"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/statefulset"
	clonesetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/cloneset"
	podwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/pod"
	pubwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/podunavailablebudget"
	statefulsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/statefulset"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// env is set once in TestMain and only read afterwards.
var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{Name: "podunavailablebudget", ManagerNamespace: true, LogVerbosity: 3, Setup: setUp}))
}

// setUp starts three simulated nodes and the manager with the CloneSet, Advanced StatefulSet,
// pod readiness and PodUnavailableBudget controllers, their webhooks and the pod webhooks with
// the budget's step and check, with PodUnavailableBudgetUpdateGate on.
func setUp(ctx context.Context, e *framework.Env, _ string) (func(), error) {
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
	sim, err := framework.StartNodeSimulator(ctx, env,
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
	o, err := harness.LoopbackOptions(env.Dir, harness.ManagerNamespace)
	if err != nil {
		return teardown, err
	}
	o.Controllers = []manager.Component{
		{Name: cloneset.Name, Setup: cloneset.SetupWithManager},
		{Name: podreadiness.Name, Setup: podreadiness.SetupWithManager},
		{Name: podunavailablebudget.Name, Setup: podunavailablebudget.SetupWithManager},
		{Name: statefulset.Name, Setup: statefulset.SetupWithManager},
	}
	o.Webhooks = []setup.Webhooks{
		clonesetwebhook.Handlers,
		statefulsetwebhook.Handlers,
		podwebhook.Handlers(podhook.StepFactory),
		podwebhook.ValidatingHandlers(podhook.CheckFactory),
		pubwebhook.Handlers,
	}
	o.Workers = map[string]int{cloneset.Name: 3, podreadiness.Name: 3, podunavailablebudget.Name: 3, statefulset.Name: 3}
	if err := o.Gates.SetFromMap(map[string]bool{string(features.PodUnavailableBudgetUpdateGate): true}); err != nil {
		return teardown, err
	}
	mgr := harness.Start(ctx, env.Config, "manager", o)
	stops = append(stops, mgr.Stop)
	if err := harness.RegisterWebhooks(ctx, env.Client, harness.ManagerNamespace, o.WebhookPort); err != nil {
		return teardown, fmt.Errorf("register webhooks: %w", err)
	}
	if err := mgr.WaitReady(ctx, framework.Long); err != nil {
		return teardown, fmt.Errorf("manager not ready: %w", err)
	}
	if err := harness.WaitForCABundle(ctx, env.Client, framework.Long); err != nil {
		return teardown, fmt.Errorf("webhook caBundle not patched: %w", err)
	}
	return teardown, nil
}
