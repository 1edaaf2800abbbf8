package podprobemarker

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/features"
)

// ValidatingPath is the 1.8 path of the PodProbeMarker validating webhook.
const ValidatingPath = "/validate-apps-kruise-io-podprobemarker"

// Handlers returns the PodProbeMarker validating handler by its 1.8 path.
func Handlers(_ ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	return map[string]admission.Handler{ValidatingPath: NewHandler(d.Gates)}
}

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
