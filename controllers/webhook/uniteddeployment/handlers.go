package uniteddeployment

import (
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
)

// Handlers serves the UnitedDeployment defaulting and validating handlers at their 1.8 paths,
// /mutate- and /validate-apps-kruise-io-v1alpha1-uniteddeployment; the validating one also
// enforces deletion protection.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Version: "v1alpha1", Name: "uniteddeployment",
	Mutating: admit.TemplateDefaulting(setDefaults, subsetTemplate),
	Validating: func(e admit.Env) admission.Handler {
		e.Kind.WithOld = true
		return admit.Validating(e.Kind, admit.Pure(validate)).ProtectDeletion(e.Guard(), validateDeletion)
	},
}.Handlers

// subsetTemplate is what decides whether the templates are defaulted on an update.
func subsetTemplate(ud *appsv1alpha1.UnitedDeployment) any { return ud.Spec.Template }
