package podprobemarker

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/features"
)

// Handlers serves the PodProbeMarker validating handler at its 1.8 path,
// /validate-apps-kruise-io-podprobemarker.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Name: "podprobemarker",
	Validating: func(e admit.Env) admission.Handler { return NewHandler(e.Gates) },
}.Handlers

// NewHandler returns the handler. It refuses markers while PodProbeMarkerGate or KruiseDaemon is
// off (403), and invalid ones with every field error. An update of a marker being deleted
// always passes, so its finalizer can be removed whatever the gates.
func NewHandler(gates featuregate.FeatureGate) admission.Handler {
	kind := admit.Kind{Name: "podprobemarker", Decoder: admission.NewDecoder(apis.NewScheme()), WithOld: true, PassDeleting: true}
	return admit.Validating(kind, func(_ context.Context, ppm, old *appsv1alpha1.PodProbeMarker) (field.ErrorList, error) {
		if err := admit.RequireGates(gates, features.PodProbeMarkerGate, features.KruiseDaemon); err != nil {
			return nil, err
		}
		return validatePodProbeMarker(ppm, old), nil
	})
}
