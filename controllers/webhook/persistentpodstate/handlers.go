package persistentpodstate

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/workloadref"
	"github.com/kruise-addon/kruise-addon/controllers/persistentpodstate/restore"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
)

// Handlers serves the PersistentPodState validating handler at its 1.8 path,
// /validate-apps-kruise-io-persistentpodstate (unversioned, as in 1.8). It refuses
// PersistentPodStates that break a rule, with every field error. It lists the namespace's
// others through the API reader, live, so that two created together cannot both claim one
// workload unseen by a cache. A targetRef of a kind that is not a StatefulSet is checked
// against the kruise-configuration ConfigMap's PPS_Watch_Custom_Workload_WhiteList, read then.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Name: "persistentpodstate",
	Validating: func(e admit.Env) admission.Handler {
		reader := e.Manager.GetAPIReader()
		targets := restore.Targets{Config: workloadref.Config{Reader: reader, Namespace: e.ManagerNamespace}}
		kind := admit.Kind{Name: "persistentpodstate", Decoder: e.Kind.Decoder, Namespaced: true, WithOld: true, PassDeleting: true}
		return admit.Validating(kind, func(ctx context.Context, pps, old *appsv1alpha1.PersistentPodState) (field.ErrorList, error) {
			list := &appsv1alpha1.PersistentPodStateList{}
			if err := kind.ListOthers(ctx, reader, list, pps.Namespace); err != nil {
				return nil, err
			}
			ref := pps.Spec.TargetReference
			custom, err := targets.Custom(ctx, ref.APIVersion, ref.Kind)
			if err != nil {
				return nil, err
			}
			return validatePersistentPodState(pps, old, list.Items, custom), nil
		})
	},
}.Handlers
