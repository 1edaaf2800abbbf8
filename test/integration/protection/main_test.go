package protection

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/kruise-addon/kruise-addon/controllers/manager"
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

// The namespace controller runs so that a namespace's deletion is carried out: it deletes
// everything in a terminating namespace, and the namespace once it is empty.
func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{
		Name:            "protection",
		LogVerbosity:    2,
		KubeControllers: "namespace-controller",
		Manager:         managerOptions(false),
		Env:             &env,
		Setup: func(_ context.Context, s *harness.Shared) (func(), error) {
			running.mgr = s.Manager
			return func() {
				if running.mgr != nil {
					running.mgr.Stop()
				}
			}, nil
		},
	}))
}

// managerOptions serve the deletion protection webhooks and the CloneSet's, with no
// controller (deletion protection is admission only), and
// --deletion-protection-allow-in-terminating-namespace set to allowInTerminating.
func managerOptions(allowInTerminating bool) func(o *manager.Options) error {
	return func(o *manager.Options) error {
		o.Controllers = nil
		o.Webhooks = []setup.Webhooks{deletionprotection.Handlers, clonesetwebhook.Handlers}
		o.DeletionAllowedInTerminatingNamespace = allowInTerminating
		// The suite starts a manager again when a test needs the other setting.
		o.SkipControllerNameValidation = true
		// ResourcesDeletionProtection is off by default, as in 1.8: the suite turns it on.
		return o.Gates.Set("ResourcesDeletionProtection=true")
	}
}

// useManager makes sure the manager runs with --deletion-protection-allow-in-terminating-namespace
// set to allowInTerminating.
func useManager(t *testing.T, allowInTerminating bool) {
	t.Helper()
	if running.allowInTerminating == allowInTerminating {
		return
	}
	o, err := harness.LoopbackOptions(env.Dir, harness.ManagerNamespace)
	if err != nil {
		t.Fatal(err)
	}
	if err := managerOptions(allowInTerminating)(o); err != nil {
		t.Fatal(err)
	}
	mgr, err := harness.Restart(context.Background(), env, running.mgr, fmt.Sprintf("manager-allow-in-terminating-%v", allowInTerminating), o)
	running.mgr, running.allowInTerminating = mgr, allowInTerminating
	if err != nil {
		t.Fatal(err)
	}
}
