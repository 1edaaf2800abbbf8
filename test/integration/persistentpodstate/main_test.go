package persistentpodstate

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/persistentpodstate"
	ppspodhook "github.com/kruise-addon/kruise-addon/controllers/persistentpodstate/podhook"
	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/statefulset"
	ppswebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/persistentpodstate"
	podwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/pod"
	statefulsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/statefulset"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// zones are the simulated zones, two nodes each.
var zones = []string{"zone-a", "zone-b", "zone-c"}

// env is set once in TestMain and only read afterwards.
var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{Name: "persistentpodstate", ManagerNamespace: true, LogVerbosity: 4, Setup: setUp}))
}

// setUp starts six simulated nodes in three zones, kube-scheduler and kube-controller-manager
// (whose StatefulSet controller runs the apps/v1 StatefulSets), and the manager with the
// Advanced StatefulSet, pod readiness and PersistentPodState controllers, the StatefulSet and
// PersistentPodState webhooks and /mutate-pod with the PersistentPodState step.
func setUp(ctx context.Context, e *framework.Env, _ string) (func(), error) {
	env = e
	var stops []func()
	teardown := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	var nodes []*corev1.Node
	for i := range 6 {
		nodes = append(nodes, builder.Node(fmt.Sprintf("node-%d", i)).Zone(zones[i%3]).Capacity("64", "256Gi", 500).Obj())
	}
	// Deleted pods go in 100ms rather than after their grace period, so recreations are quick.
	sim, err := framework.StartNodeSimulator(ctx, env, framework.WithoutScheduler(), framework.WithNodes(nodes...),
		framework.WithTerminationDelay(100*time.Millisecond))
	if err != nil {
		return teardown, fmt.Errorf("start node simulator: %w", err)
	}
	stops = append(stops, sim.Stop)
	if err := env.StartKubeControllers(ctx); err != nil {
		return teardown, fmt.Errorf("start kube-scheduler and kube-controller-manager: %w", err)
	}
	o, err := harness.LoopbackOptions(env.Dir, harness.ManagerNamespace)
	if err != nil {
		return teardown, err
	}
	o.Controllers = []manager.Component{
		{Name: podreadiness.Name, Setup: podreadiness.SetupWithManager},
		{Name: statefulset.Name, Setup: statefulset.SetupWithManager},
		{Name: persistentpodstate.Name, Setup: persistentpodstate.SetupWithManager},
	}
	o.Webhooks = []setup.Webhooks{statefulsetwebhook.Handlers, podwebhook.Handlers(ppspodhook.StepFactory), ppswebhook.Handlers}
	mgr, err := harness.Serve(ctx, env, "manager", o)
	stops = append(stops, mgr.Stop)
	return teardown, err
}
