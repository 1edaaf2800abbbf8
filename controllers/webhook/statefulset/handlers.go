package statefulset

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	"github.com/kruise-addon/kruise-addon/features"
)

// Handlers serves the StatefulSet defaulting and validating handlers at their 1.8 paths,
// /mutate- and /validate-apps-kruise-io-statefulset; the validating one also enforces deletion
// protection. Both served versions, v1alpha1 and v1beta1, have the same JSON shape, so both are
// read as plain JSON into the storage version's type, and a patch computed on it applies to the
// object as sent.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Name: "statefulset",
	Mutating: func(e admit.Env) admission.Handler { return mutatingHandler(e.Gates) },
	Validating: func(e admit.Env) admission.Handler {
		return validatingHandler(e.Guard(), e.Gates, e.Manager.GetAPIReader())
	},
}.Handlers

// mutatingHandler returns the defaulting handler under gates.
func mutatingHandler(gates featuregate.FeatureGate) admission.Handler {
	kind := admit.Kind{Name: "statefulset", Decoder: admit.JSON}
	return admit.TemplateDefaultingHandler(kind, gates, func(set *appsv1beta1.StatefulSet, templates bool) {
		setDefaults(&set.Spec, gates, templates)
	}, podTemplate)
}

// podTemplate is what decides whether the templates are defaulted on an update: 1.8 compares
// the pod template only.
func podTemplate(set *appsv1beta1.StatefulSet) any { return set.Spec.Template }

// validatingHandler returns the validating handler, whose deletion protection guard answers.
// With StatefulSetAutoResizePVCGate, a resize of the volume claim templates is checked against
// their StorageClasses, read through classes.
func validatingHandler(guard *deletionprotection.Guard, gates featuregate.FeatureGate, classes client.Reader) admission.Handler {
	kind := admit.Kind{Name: "statefulset", Decoder: admit.JSON, Namespaced: true, WithOld: true}
	return admit.Validating(kind, func(ctx context.Context, set, old *appsv1beta1.StatefulSet) (field.ErrorList, error) {
		errs := validateStatefulSet(set, old)
		if old == nil || !gates.Enabled(features.StatefulSetAutoResizePVCGate) {
			return errs, nil
		}
		more, err := validateClaimTemplatesUpdate(set, old, readStorageClasses(ctx, classes))
		return append(errs, more...), err
	}).ProtectDeletion(guard, validateDeletion)
}
