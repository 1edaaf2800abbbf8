package sidecarterminator

import (
	"os"
	"testing"

	"k8s.io/component-base/featuregate"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/sidecarterminator"
	crrwebhook "github.com/kruise-addon/kruise-addon/controllers/webhook/containerrecreaterequest"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// env is set once in TestMain and only read afterwards.
var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{
		Name:         "sidecarterminator",
		LogVerbosity: 4,
		// The manager runs the SidecarTerminator and the ContainerRecreateRequest webhook, which
		// fills in the requests it creates from their pods.
		Controllers: harness.Controllers(sidecarterminator.Name),
		Webhooks:    []setup.Webhooks{crrwebhook.Handlers},
		Gates:       []featuregate.Feature{features.SidecarTerminator},
		Env:         &env,
	}))
}
