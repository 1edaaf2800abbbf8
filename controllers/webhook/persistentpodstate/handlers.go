package persistentpodstate

import (
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
		return admit.Validating(kind, admit.AgainstOthers(kind, e.Manager.GetAPIReader(),
			func(l *appsv1alpha1.PersistentPodStateList) []appsv1alpha1.PersistentPodState { return l.Items },
			validatePersistentPodState))
	},
}.Handlers
