package podunavailablebudget

import (
	"fmt"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/features"
)

// Handlers serves the PodUnavailableBudget validating handler at its 1.8 path,
// /validate-policy-kruise-io-podunavailablebudget (unversioned). It refuses every budget while
// both budget gates are off (400), as nothing would enforce it, and invalid ones with every
// field error. It lists the namespace's other budgets through the API reader, live, so that two
// created together cannot both claim one workload unseen by a cache.
var Handlers = admit.Webhooks{Group: "policy.kruise.io", Name: "podunavailablebudget", Validating: validatingHandler}.Handlers

func validatingHandler(e admit.Env) admission.Handler {
	kind := admit.Kind{
		Name: "podunavailablebudget", Decoder: e.Kind.Decoder,
		Namespaced: true, WithOld: true, PassDeleting: true,
		Gate: func() error {
			if !e.Gates.Enabled(features.PodUnavailableBudgetDeleteGate) && !e.Gates.Enabled(features.PodUnavailableBudgetUpdateGate) {
				return admit.Refuse(http.StatusBadRequest, fmt.Errorf("PodUnavailableBudget is off: turn on feature gate %s or %s",
					features.PodUnavailableBudgetDeleteGate, features.PodUnavailableBudgetUpdateGate))
			}
			return nil
		},
	}
	return admit.Validating(kind, admit.AgainstOthers(kind, e.Manager.GetAPIReader(),
		func(l *policyv1alpha1.PodUnavailableBudgetList) []policyv1alpha1.PodUnavailableBudget { return l.Items },
		validatePub))
}
