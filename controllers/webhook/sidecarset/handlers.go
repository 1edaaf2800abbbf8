package sidecarset

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/features"
)

// Handlers serves the SidecarSet defaulting and validating handlers at their 1.8 paths,
// /mutate- and /validate-apps-kruise-io-v1alpha1-sidecarset. The defaulting one also stamps the
// revision hashes; the validating one reads the other SidecarSets and the namespaces from the
// manager's cache.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Version: "v1alpha1", Name: "sidecarset",
	Mutating: func(e admit.Env) admission.Handler {
		return admit.Mutating(e.Kind, func(_ context.Context, s, _ *appsv1alpha1.SidecarSet) error { return setDefaults(s) })
	},
	Validating: validatingHandler,
}.Handlers

func validatingHandler(e admit.Env) admission.Handler {
	reader := e.Manager.GetClient()
	patchMetadata := e.Gates.Enabled(features.SidecarSetPatchPodMetadataDefaultsAllowed)
	e.Kind.WithOld = true
	return admit.Validating(e.Kind, func(ctx context.Context, s, old *appsv1alpha1.SidecarSet) (field.ErrorList, error) {
		list := &appsv1alpha1.SidecarSetList{}
		if err := e.Kind.ListOthers(ctx, reader, list, ""); err != nil {
			return nil, err
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
	})
}
