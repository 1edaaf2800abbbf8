package manager

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/controllers/manager"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/configuration"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// TestPatcherWritesVpodUpdateAsPodUnavailableBudgetUpdateGateSays starts a manager on a
// configuration rendered for the other value of PodUnavailableBudgetUpdateGate and expects the
// manager's configuration patcher to give vpod.kb.io the operations its own gate asks for: UPDATE
// only while the gate is on, since no other check of /validate-pod answers a pod update.
func TestPatcherWritesVpodUpdateAsPodUnavailableBudgetUpdateGateSays(t *testing.T) {
	gates := func(updateGate bool) *manager.Options {
		o := manager.NewOptions()
		if err := o.Gates.Set(fmt.Sprintf("%s=%t", features.PodUnavailableBudgetUpdateGate, updateGate)); err != nil {
			t.Fatal(err)
		}
		return o
	}
	cases := map[string]struct {
		renderedWith, managerWith bool
		wantOperations            []admissionregistrationv1.OperationType
	}{
		"a manager with the gate off removes UPDATE from a configuration rendered with it on": {
			renderedWith: true, managerWith: false,
			wantOperations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
		},
		"a manager with the gate on adds UPDATE to a configuration rendered with it off": {
			renderedWith: false, managerWith: true,
			wantOperations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update, admissionregistrationv1.Delete},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := framework.NewNamespace(t, env.Client, "webhook-rules-", nil)
			installConfigurations(t, configuration.Target{Namespace: ns, Gates: gates(tc.renderedWith).Gates})
			o := testOptions(t, ns)
			o.Gates = gates(tc.managerWith).Gates
			o.Webhooks = manager.NewOptions().Webhooks
			startManager(t, env.Config, o)
			waitReady(t, o)

			framework.Eventually(t, framework.Medium, "vpod.kb.io's operations patched as the manager's gate says", func(ctx context.Context) error {
				v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
				if err := env.Client.Get(ctx, client.ObjectKey{Name: configuration.ValidatingName}, v); err != nil {
					return err
				}
				for _, w := range v.Webhooks {
					if w.Name != "vpod.kb.io" {
						continue
					}
					if len(w.Rules) != 1 {
						return fmt.Errorf("vpod.kb.io has %d rules, want 1", len(w.Rules))
					}
					if diff := cmp.Diff(tc.wantOperations, w.Rules[0].Operations); diff != "" {
						return fmt.Errorf("vpod.kb.io operations (-want +got):\n%s", diff)
					}
					return nil
				}
				return fmt.Errorf("vpod.kb.io is not in %s", configuration.ValidatingName)
			})
		})
	}
}
