package resourcedistribution

import (
	"context"
	"fmt"
	"os"
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

// running is the manager the tests run against and whether its gate is on; useManager
// replaces it when a test needs the other setting.
var running struct {
	mgr    *harness.Manager
	gateOn bool
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

// useManager makes sure a manager runs with ResourceDistributionGate set to gateOn, serving
// the ResourceDistribution controller and webhook exactly as components.go lists them, with
// both webhook configurations registered afresh for it. The webhook answers as the new
// manager's gate says once it is registered again.
func useManager(t *testing.T, gateOn bool) {
	t.Helper()
	if running.mgr != nil && running.gateOn == gateOn {
		return
	}
	if running.mgr != nil {
		running.mgr.Stop()
		running.mgr = nil
	}
	ctx := context.Background()
	for _, obj := range []client.Object{
		&admissionregistrationv1.MutatingWebhookConfiguration{}, &admissionregistrationv1.ValidatingWebhookConfiguration{},
	} {
		name := configuration.MutatingName
		if _, ok := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration); ok {
			name = configuration.ValidatingName
		}
		obj.SetName(name)
		if err := client.IgnoreNotFound(env.Client.Delete(ctx, obj)); err != nil {
			t.Fatalf("delete %s: %v", name, err)
		}
	}
	o, err := harness.LoopbackOptions(t.TempDir(), harness.ManagerNamespace)
	if err != nil {
		t.Fatal(err)
	}
	o.EnableLeaderElection = false
	// The suite starts a manager again when a test needs the other gate setting.
	o.SkipControllerNameValidation = true
	if err := o.Gates.SetFromMap(map[string]bool{string(features.ResourceDistributionGate): gateOn}); err != nil {
		t.Fatal(err)
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
	mgr, err := harness.Serve(ctx, env, fmt.Sprintf("manager-gate-%v", gateOn), o)
	running.mgr, running.gateOn = mgr, gateOn
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
