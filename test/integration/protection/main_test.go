package protection

import (
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

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{
		Name:             "protection",
		ManagerNamespace: true,
		LogVerbosity:     2,
		Manager:          managerOptions,
		Env:              &env,
	}))
}

// managerOptions serve the deletion protection webhooks and the CloneSet's, with no
// controller: deletion protection is admission only.
func managerOptions(o *manager.Options) error {
	o.Controllers = nil
	o.Webhooks = []setup.Webhooks{deletionprotection.Handlers, clonesetwebhook.Handlers}
	// ResourcesDeletionProtection is off by default, as in 1.8: the suite turns it on.
	return o.Gates.Set("ResourcesDeletionProtection=true")
}
