package podunavailablebudget

import (
	"context"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/features"
)

// ValidatingPath is the 1.8 path of the PodUnavailableBudget validating webhook (unversioned).
const ValidatingPath = "/validate-policy-kruise-io-podunavailablebudget"

// Handlers returns the PodUnavailableBudget validating handler by its 1.8 path. It refuses
// every budget while both budget gates are off (400), as nothing would enforce it, and invalid
// ones with every field error. It lists the namespace's other budgets through the API reader,
// live, so that two created together cannot both claim one workload unseen by a cache.
func Handlers(mgr ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	kind := admit.Kind{
		Name: "podunavailablebudget", Decoder: admission.NewDecoder(apis.NewScheme()),
		Namespaced: true, WithOld: true, PassDeleting: true,
		Gate: func() error {
			if !d.Gates.Enabled(features.PodUnavailableBudgetDeleteGate) && !d.Gates.Enabled(features.PodUnavailableBudgetUpdateGate) {
				return admit.Refuse(http.StatusBadRequest, fmt.Errorf("PodUnavailableBudget is off: turn on feature gate %s or %s",
					features.PodUnavailableBudgetDeleteGate, features.PodUnavailableBudgetUpdateGate))
			}
			return nil
		},
	}
	others := mgr.GetAPIReader()
	return map[string]admission.Handler{ValidatingPath: admit.Validating(kind,
		func(ctx context.Context, pub, old *policyv1alpha1.PodUnavailableBudget) (field.ErrorList, error) {
			list := &policyv1alpha1.PodUnavailableBudgetList{}
			if err := others.List(ctx, list, client.InNamespace(pub.Namespace)); err != nil {
				return nil, fmt.Errorf("list podunavailablebudgets: %w", err)
			}
			return validatePub(pub, old, list.Items), nil
		})}
}
