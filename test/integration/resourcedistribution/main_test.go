package resourcedistribution

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/resourcedistribution"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// env is set once in TestMain and only read afterwards.
var env *framework.Env

// running is the manager the tests run against and the settings it runs with; useManager
// replaces it when a test needs other settings.
var running struct {
	mgr      *harness.Manager
	settings settings
}

// settings are what a test asks of the manager: ResourceDistributionGate and the two policies a
// platform may turn on.
type settings struct {
	gateOn            bool
	checkAuthorRights bool
	excluded          string
}

func TestMain(m *testing.M) {
	os.Exit(harness.Main(m, harness.Suite{Name: "resourcedistribution", ManagerNamespace: true, LogVerbosity: 4,
		Setup: func(_ context.Context, s *harness.Shared) (func(), error) {
			env = s.Env
			return func() {
				if running.mgr != nil {
					running.mgr.Stop()
				}
			}, nil
		}}))
}

// useManager makes sure a manager runs with ResourceDistributionGate set to gateOn and 1.8's
// behaviour otherwise.
func useManager(t *testing.T, gateOn bool) {
	t.Helper()
	useManagerWith(t, settings{gateOn: gateOn})
}

// useManagerWith makes sure a manager runs with s, serving the ResourceDistribution controller
// and webhook exactly as components.go lists them, with both webhook configurations registered
// afresh for it. The webhook answers as the new manager's settings say once it is registered
// again.
func useManagerWith(t *testing.T, s settings) {
	t.Helper()
	if running.mgr != nil && running.settings == s {
		return
	}
	ctx := context.Background()
	o, err := harness.LoopbackOptions(t.TempDir(), harness.ManagerNamespace)
	if err != nil {
		t.Fatal(err)
	}
	o.EnableLeaderElection = false
	// The suite starts a manager again when a test needs other settings.
	o.SkipControllerNameValidation = true
	if err := o.Gates.SetFromMap(map[string]bool{string(features.ResourceDistributionGate): s.gateOn}); err != nil {
		t.Fatal(err)
	}
	o.DistributionCheckAuthorRights = s.checkAuthorRights
	if s.excluded != "" {
		o.DistributionExcludedNamespaces = strings.Split(s.excluded, ",")
	}
	o.Controllers = nil
	for _, c := range manager.Controllers() {
		if c.Name == resourcedistribution.Name {
			o.Controllers = append(o.Controllers, c)
		}
	}
	if len(o.Controllers) != 1 {
		t.Fatalf("components.go lists %d %s controllers, want 1", len(o.Controllers), resourcedistribution.Name)
	}
	o.Webhooks = manager.WebhookSets()
	mgr, err := harness.Restart(ctx, env, running.mgr, fmt.Sprintf("manager-gate-%v-rights-%v-excluded-%s", s.gateOn, s.checkAuthorRights, s.excluded), o)
	running.mgr, running.settings = mgr, s
	if err != nil {
		t.Fatal(err)
	}
	// The webhook is served whatever the gate: with it off it refuses distributions.
	framework.Eventually(t, framework.Long, "the ResourceDistribution webhook registered", func(ctx context.Context) error {
		v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: configuration.ValidatingName}, v); err != nil {
			return err
		}
		served := false
		for _, w := range v.Webhooks {
			served = served || w.Name == "vresourcedistribution.kb.io"
		}
		return framework.Want(served, "vresourcedistribution.kb.io listed")
	})
}
