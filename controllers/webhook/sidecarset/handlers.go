package sidecarset

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/features"
)

const (
	// MutatingPath is the 1.8 path of the SidecarSet defaulting webhook.
	MutatingPath = "/mutate-apps-kruise-io-v1alpha1-sidecarset"
	// ValidatingPath is the 1.8 path of the SidecarSet validating webhook.
	ValidatingPath = "/validate-apps-kruise-io-v1alpha1-sidecarset"
)

// Handlers returns the SidecarSet defaulting and validating handlers by their 1.8 paths. The
// defaulting one also stamps the revision hashes; the validating one reads the other
// SidecarSets and the namespaces from the manager's cache.
func Handlers(mgr ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	dec := admission.NewDecoder(mgr.GetScheme())
	reader := mgr.GetClient()
	patchMetadata := d.Gates.Enabled(features.SidecarSetPatchPodMetadataDefaultsAllowed)
	return map[string]admission.Handler{
		MutatingPath: admit.Mutating(admit.Kind{Name: "sidecarset", Decoder: dec}, func(_ context.Context, s, _ *appsv1alpha1.SidecarSet) error {
			return setDefaults(s)
		}),
		ValidatingPath: admit.Validating(admit.Kind{Name: "sidecarset", Decoder: dec, WithOld: true},
			func(ctx context.Context, s, old *appsv1alpha1.SidecarSet) (field.ErrorList, error) {
				list := &appsv1alpha1.SidecarSetList{}
				if err := reader.List(ctx, list); err != nil {
					return nil, fmt.Errorf("list sidecarsets: %w", err)
				}
				others := make([]*appsv1alpha1.SidecarSet, 0, len(list.Items))
				for i := range list.Items {
					others = append(others, &list.Items[i])
				}
				r := rules{patchMetadata: patchMetadata, namespaceLabels: func(name string) (labels.Set, bool) {
					ns := &corev1.Namespace{}
					if err := reader.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
						return nil, false
					}
					return ns.Labels, true
				}}
				return validateSidecarSet(s, old, others, r), nil
			}),
	}
}
