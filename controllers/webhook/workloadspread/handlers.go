package workloadspread

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/workloadref"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
)

// ValidatingPath is the 1.8 path of the WorkloadSpread validating webhook.
const ValidatingPath = "/validate-apps-kruise-io-v1alpha1-workloadspread"

// Handlers returns the WorkloadSpread validating handler by its 1.8 path.
func Handlers(mgr ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	config := workloadref.Config{Reader: mgr.GetAPIReader(), Namespace: d.ManagerNamespace}
	return map[string]admission.Handler{ValidatingPath: NewHandler(mgr.GetAPIReader(), config)}
}

// NewHandler returns the handler, which refuses WorkloadSpreads that break a rule with every
// field error. It lists the namespace's WorkloadSpreads through others, live, so two created
// together cannot both claim one workload unseen by a cache; the kit keeps that list in the
// request's namespace. A targetRef of a kind that is not built in is checked against the
// custom-workload whitelist config holds.
func NewHandler(others client.Reader, config workloadref.Config) admission.Handler {
	kind := admit.Kind{Name: "workloadspread", Decoder: admission.NewDecoder(apis.NewScheme()), Namespaced: true, WithOld: true, PassDeleting: true}
	return admit.Validating(kind, func(ctx context.Context, ws, old *appsv1alpha1.WorkloadSpread) (field.ErrorList, error) {
		list := &appsv1alpha1.WorkloadSpreadList{}
		if err := others.List(ctx, list, client.InNamespace(ws.Namespace)); err != nil {
			return nil, fmt.Errorf("list workloadspreads: %w", err)
		}
		var custom *workloadref.Whitelist
		if ref := ws.Spec.TargetReference; ref != nil {
			if gk, err := groupKind(ref); err == nil && !workloadref.IsBuiltIn(gk) {
				if custom, err = config.WorkloadSpreadWhitelist(ctx); err != nil {
					return nil, err
				}
			}
		}
		return validateWorkloadSpread(ws, old, list.Items, custom), nil
	})
}
