package workloadspread

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/workloadref"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
)

// Handlers serves the WorkloadSpread validating handler at its 1.8 path,
// /validate-apps-kruise-io-v1alpha1-workloadspread.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Version: "v1alpha1", Name: "workloadspread",
	Validating: func(e admit.Env) admission.Handler {
		reader := e.Manager.GetAPIReader()
		return NewHandler(reader, workloadref.Config{Reader: reader, Namespace: e.ManagerNamespace})
	},
}.Handlers

// NewHandler returns the handler, which refuses WorkloadSpreads that break a rule with every
// field error. It lists the namespace's WorkloadSpreads through others, live, so two created
// together cannot both claim one workload unseen by a cache; the kit keeps that list in the
// request's namespace. A targetRef of a kind that is not built in is checked against the
// custom-workload whitelist config holds.
func NewHandler(others client.Reader, config workloadref.Config) admission.Handler {
	kind := admit.Kind{Name: "workloadspread", Decoder: admission.NewDecoder(apis.NewScheme()), Namespaced: true, WithOld: true, PassDeleting: true}
	return admit.Validating(kind, func(ctx context.Context, ws, old *appsv1alpha1.WorkloadSpread) (field.ErrorList, error) {
		list := &appsv1alpha1.WorkloadSpreadList{}
		if err := kind.ListOthers(ctx, others, list, ws.Namespace); err != nil {
			return nil, err
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
