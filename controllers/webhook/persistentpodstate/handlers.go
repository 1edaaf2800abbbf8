package persistentpodstate

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
)

// ValidatingPath is the 1.8 path of the PersistentPodState validating webhook (unversioned, as
// in 1.8).
const ValidatingPath = "/validate-apps-kruise-io-persistentpodstate"

// Handlers returns the PersistentPodState validating handler by its 1.8 path. It refuses
// PersistentPodStates that break a rule, with every field error. It lists the namespace's
// others through the API reader, live, so that two created together cannot both claim one
// workload unseen by a cache.
func Handlers(mgr ctrl.Manager, _ setup.Deps) map[string]admission.Handler {
	kind := admit.Kind{Name: "persistentpodstate", Decoder: admission.NewDecoder(apis.NewScheme()), Namespaced: true, WithOld: true, PassDeleting: true}
	others := mgr.GetAPIReader()
	return map[string]admission.Handler{ValidatingPath: admit.Validating(kind,
		func(ctx context.Context, pps, old *appsv1alpha1.PersistentPodState) (field.ErrorList, error) {
			list := &appsv1alpha1.PersistentPodStateList{}
			if err := others.List(ctx, list, client.InNamespace(pps.Namespace)); err != nil {
				return nil, fmt.Errorf("list persistentpodstates: %w", err)
			}
			return validatePersistentPodState(pps, old, list.Items), nil
		})}
}
