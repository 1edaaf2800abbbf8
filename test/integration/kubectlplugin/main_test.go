package kubectlplugin

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kruise-addon/kruise-addon/controllers/cloneset"
	"github.com/kruise-addon/kruise-addon/controllers/daemonset"
	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/statefulset"
	clonesetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/cloneset"
	daemonsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/daemonset"
	podwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/pod"
	statefulsetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/statefulset"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// nodeCount is how many simulated nodes run; an Advanced DaemonSet has one pod on each.
const nodeCount = 3

// env is set once in TestMain and only read afterwards.
var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{Name: "kubectlplugin", ManagerNamespace: true, LogVerbosity: 2, Setup: setUp}))
}

// setUp starts the simulated nodes, kube-controller-manager (Deployments, for kubectl's own
// wording) with kube-scheduler, and the manager with the three workload controllers.
func setUp(ctx context.Context, e *framework.Env, log string) (func(), error) {
	env = e
	var stops []func()
	teardown := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	var nodes []*corev1.Node
	for i := range nodeCount {
		nodes = append(nodes, builder.Node(fmt.Sprintf("node-%d", i)).Obj())
	}
	sim, err := framework.StartNodeSimulator(ctx, env,
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
	// After the nodes: the simulator writes their status once.
	if err := env.StartKubeControllers(ctx, framework.WithControllers("deployment-controller,replicaset-controller,statefulset-controller,daemonset-controller,garbage-collector-controller")); err != nil {
		return teardown, fmt.Errorf("start kube-controller-manager and kube-scheduler: %w", err)
	}
	o, err := harness.LoopbackOptions(env.Dir, harness.ManagerNamespace)
	if err != nil {
		return teardown, err
	}
	o.Controllers = []manager.Component{
		{Name: cloneset.Name, Setup: cloneset.SetupWithManager},
		{Name: statefulset.Name, Setup: statefulset.SetupWithManager},
		{Name: daemonset.Name, Setup: daemonset.SetupWithManager},
		{Name: podreadiness.Name, Setup: podreadiness.SetupWithManager},
	}
	o.Webhooks = []setup.Webhooks{clonesetwebhook.Handlers, statefulsetwebhook.Handlers, daemonsetwebhook.Handlers, podwebhook.Handlers()}
	mgr, err := harness.Serve(ctx, env, "manager", o)
	if mgr != nil {
		stops = append(stops, mgr.Stop)
	}
	if err != nil {
		return teardown, fmt.Errorf("%w (log: %s)", err, log)
	}
	return teardown, nil
}
