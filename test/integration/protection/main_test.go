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

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{
		Name:             "protection",
		ManagerNamespace: true,
		LogVerbosity:     2,
		Setup:            start,
	}))
}

// start runs a manager serving the deletion protection webhooks and the CloneSet's, with no
// controller: deletion protection is admission only.
func start(ctx context.Context, e *framework.Env, log string) (func(), error) {
	env = e
	o, err := harness.LoopbackOptions(env.Dir, harness.ManagerNamespace)
	if err != nil {
		return func() {}, err
	}
	o.Controllers = nil
	// ResourcesDeletionProtection is off by default, as in 1.8: the suite turns it on.
	if err := o.Gates.Set("ResourcesDeletionProtection=true"); err != nil {
		return func() {}, err
	}
	o.Webhooks = []setup.Webhooks{deletionprotection.Handlers, clonesetwebhook.Handlers}
	mgr := harness.Start(ctx, env.Config, "manager", o)
	if err := harness.RegisterWebhooks(ctx, env.Client, harness.ManagerNamespace, o.WebhookPort); err != nil {
		return mgr.Stop, fmt.Errorf("register webhooks: %w", err)
	}
	if err := mgr.WaitReady(ctx, framework.Long); err != nil {
		return mgr.Stop, fmt.Errorf("manager not ready (log: %s): %w", log, err)
	}
	if err := harness.WaitForCABundle(ctx, env.Client, framework.Long); err != nil {
		return mgr.Stop, fmt.Errorf("webhook caBundle not patched (log: %s): %w", log, err)
	}
	return mgr.Stop, nil
}
