package persistentpodstate

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
)

// Handlers serves the PersistentPodState validating handler at its 1.8 path,
// /validate-apps-kruise-io-persistentpodstate (unversioned, as in 1.8). It refuses
// PersistentPodStates that break a rule, with every field error. It lists the namespace's
// others through the API reader, live, so that two created together cannot both claim one
// workload unseen by a cache.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Name: "persistentpodstate",
	Validating: func(e admit.Env) admission.Handler {
		kind := admit.Kind{Name: "persistentpodstate", Decoder: admission.NewDecoder(apis.NewScheme()), Namespaced: true, WithOld: true, PassDeleting: true}
		others := e.Manager.GetAPIReader()
		return admit.Validating(kind, func(ctx context.Context, pps, old *appsv1alpha1.PersistentPodState) (field.ErrorList, error) {
			list := &appsv1alpha1.PersistentPodStateList{}
			if err := kind.ListOthers(ctx, others, list, pps.Namespace); err != nil {
				return nil, err
			}
			return validatePersistentPodState(pps, old, list.Items), nil
		})
	},
}.Handlers
