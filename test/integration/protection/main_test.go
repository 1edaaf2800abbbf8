package protection

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
	clonesetwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/cloneset"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// env is set once in TestMain and only read afterwards.
var env *framework.Env

// running is the manager the tests run against and whether it lets protected deletions through
// in terminating namespaces; useManager replaces it when a test needs the other setting.
var running struct {
	mgr                *harness.Manager
	allowInTerminating bool
}

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{
		Name:             "protection",
		ManagerNamespace: true,
		LogVerbosity:     2,
		Setup: func(ctx context.Context, e *framework.Env, log string) (func(), error) {
			env = e
			stop := func() {
				if running.mgr != nil {
					running.mgr.Stop()
				}
			}
			mgr, err := serve(ctx, running.mgr, false)
			running.mgr = mgr
			if err != nil {
				return stop, fmt.Errorf("%w (log: %s)", err, log)
			}
			return stop, nil
		},
	}))
}

// serve stops running and starts a manager serving the deletion protection webhooks and the
// CloneSet's, with no controller (deletion protection is admission only), with
// --deletion-protection-allow-in-terminating-namespace set to allowInTerminating.
func serve(ctx context.Context, running *harness.Manager, allowInTerminating bool) (*harness.Manager, error) {
	o, err := harness.LoopbackOptions(env.Dir, harness.ManagerNamespace)
	if err != nil {
		return nil, err
	}
	o.Controllers = nil
	// The suite starts a manager again when a test needs the other setting.
	o.SkipControllerNameValidation = true
	// ResourcesDeletionProtection is off by default, as in 1.8: the suite turns it on.
	if err := o.Gates.Set("ResourcesDeletionProtection=true"); err != nil {
		return nil, err
	}
	o.DeletionAllowedInTerminatingNamespace = allowInTerminating
	o.Webhooks = []setup.Webhooks{deletionprotection.Handlers, clonesetwebhook.Handlers}
	return harness.Restart(ctx, env, running, fmt.Sprintf("manager-allow-in-terminating-%v", allowInTerminating), o)
}

// useManager makes sure the manager runs with --deletion-protection-allow-in-terminating-namespace
// set to allowInTerminating.
func useManager(t *testing.T, allowInTerminating bool) {
	t.Helper()
	if running.mgr != nil && running.allowInTerminating == allowInTerminating {
		return
	}
	mgr, err := serve(context.Background(), running.mgr, allowInTerminating)
	running.mgr, running.allowInTerminating = mgr, allowInTerminating
	if err != nil {
		t.Fatal(err)
	}
}

// namespaceController runs kube-controller-manager's namespace controller for the tests that
// need a namespace's deletion carried out: it deletes everything in a terminating namespace, and
// the namespace once it is empty.
var namespaceController harness.KubeControllers
