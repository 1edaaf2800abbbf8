package cloneset

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kruise-addon/kruise-addon/controllers/cloneset"
	"github.com/kruise-addon/kruise-addon/controllers/launchpriority"
	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/podreadiness"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	clonesetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/cloneset"
	podwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/pod"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// managerNamespace is where the in-process managers keep their Lease and Secret.
const managerNamespace = harness.ManagerNamespace

var (
	// env and sim are set once in TestMain and only read afterwards.
	env *framework.Env
	sim *framework.NodeSimulator
	// primary is the manager every test relies on; the leader-election test starts a second.
	primary *harness.Manager
)

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{
		Name:             "cloneset",
		ManagerNamespace: true,
		// The CloneSet reconcile reads its pods from the cache without copying them.
		CacheMutationDetector: true,
		WithoutDetector:       []string{"TestHugeReplicasCloneSetKeepsTheManagersMemoryBounded", "TestDeletingAHugeCloneSetMidScaleLeavesNoOrphans"},
		LogVerbosity:          2,
		Nodes:                 harness.Nodes(6, "zone-a", "zone-b", "zone-c"),
		Simulator:             harness.FastPods(),
		Setup:                 setUp,
	}))
}

// setUp starts the primary manager and waits until its webhooks are registered with their CA.
// The suite starts its managers itself: the leader-election test runs a second one.
func setUp(ctx context.Context, s *harness.Shared) (func(), error) {
	env, sim = s.Env, s.Sim
	o, err := testOptions("primary")
	if err != nil {
		return nil, err
	}
	primary, err = harness.Serve(ctx, env, "primary", o)
	// The leader-election test stops primary itself; a second Stop does nothing.
	return primary.Stop, err
}

// testOptions are the manager options the tests run with: the CloneSet controller and its
// webhooks, reached by URL on loopback, and a quick retry so a takeover is fast.
func testOptions(name string) (*manager.Options, error) {
	o, err := harness.LoopbackOptions(filepath.Join(env.Dir, name), managerNamespace)
	if err != nil {
		return nil, err
	}
	// A stopped leader releases the Lease, so a standby takes over within one retry period; the
	// long renew deadline keeps a leader whose renewals a loaded machine delays from giving up
	// (and with it the webhook server every later test calls).
	o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 40*time.Second, 30*time.Second, 500*time.Millisecond
	// Two managers run in this one process; controller names are unique per process.
	o.SkipControllerNameValidation = true
	o.Controllers = harness.Controllers(cloneset.Name, podreadiness.Name)
	o.Webhooks = []setup.Webhooks{clonesetwebhook.Handlers, podwebhook.Handlers(launchpriority.StepFactory)}
	o.Workers = map[string]int{"cloneset": 3, "podreadiness": 3}
	// Pre-download is off by default (as in 1.8); the suite turns it on to test it. No pull-job
	// controller runs here, so the jobs are only created and deleted.
	// Partition rollback, preparing-update-as-update and recreating for claim template changes
	// are off by default too; the suite turns them on, and the planner's table shows the default.
	if err := o.Gates.Set("PreDownloadImageForInPlaceUpdate=true,CloneSetPartitionRollback=true,PreparingUpdateAsUpdate=true," +
		"RecreatePodWhenChangeVCTInCloneSetGate=true"); err != nil {
		return nil, err
	}
	return o, nil
}

func startManager(ctx context.Context, name string) (*harness.Manager, error) {
	o, err := testOptions(name)
	if err != nil {
		return nil, err
	}
	return harness.Start(ctx, env.Config, name, o), nil
}
