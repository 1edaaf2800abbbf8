package podprobemarker

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/nodepodprobe"
	"github.com/kruise-addon/kruise-addon/controllers/podprobemarker"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	ppmwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/podprobemarker"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// env is set once in TestMain and only read afterwards.
var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{
		Name:             "podprobemarker",
		ManagerNamespace: true,
		LogVerbosity:     4,
		Setup:            startShared,
	}))
}

// startShared starts two simulated nodes and the manager with the PodProbeMarker and
// NodePodProbe controllers and the PodProbeMarker webhook.
func startShared(ctx context.Context, e *framework.Env, log string) (func(), error) {
	env = e
	var stops []func()
	teardown := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	sim, err := framework.StartNodeSimulator(ctx, env,
		framework.WithNodes(builder.Node("node-0").Obj(), builder.Node("node-1").Obj()),
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
		{Name: podprobemarker.Name, Setup: podprobemarker.SetupWithManager},
		{Name: nodepodprobe.Name, Setup: nodepodprobe.SetupWithManager},
	}
	o.Webhooks = []setup.Webhooks{ppmwebhook.Handlers}
	o.Workers = map[string]int{podprobemarker.Name: 2, nodepodprobe.Name: 2}
	mgr, err := harness.Serve(ctx, env, "manager", o)
	if mgr != nil {
		stops = append(stops, mgr.Stop)
	}
	if err != nil {
		return teardown, fmt.Errorf("%w (log: %s)", err, log)
	}
	return teardown, nil
}
