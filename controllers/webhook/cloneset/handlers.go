package cloneset

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/deletionprotection"
	"github.com/kruise-addon/kruise-addon/features"
)

// webhooks are the CloneSet defaulting and validating webhooks. The validating handler reads
// the pods named in podsToDelete from the manager's cache, so that a list of any length costs no
// API call per name; see NewValidatingHandler for the few names it looks up in the API.
var webhooks = admit.Webhooks{Group: "apps.kruise.io", Version: "v1alpha1", Name: "cloneset",
	Mutating: func(e admit.Env) admission.Handler { return NewMutatingHandler(e.Kind.Decoder, e.Gates) },
	Validating: func(e admit.Env) admission.Handler {
		return NewValidatingHandler(e.Kind.Decoder, e.Manager.GetCache(), e.Manager.GetAPIReader(), e.Gates, e.Guard())
	},
}

// The 1.8 paths of the CloneSet webhooks, and its handlers by them.
var (
	MutatingPath, ValidatingPath = webhooks.MutatingPath(), webhooks.ValidatingPath()
	Handlers                     = webhooks.Handlers
)

// NewMutatingHandler returns the defaulting handler. Unless TemplateNoDefaults is on, it
// defaults the pod and claim templates too: on create, and on an update only when the template
// changes, so that a new default in a later release does not roll every pod.
func NewMutatingHandler(dec admission.Decoder, gates featuregate.FeatureGate) admission.Handler {
	return admit.TemplateDefaultingHandler(admit.Kind{Name: "cloneset", Decoder: dec}, gates, setDefaults, podTemplate)
}

// podTemplate is what decides whether the templates are defaulted on an update: 1.8 compares
// the pod template only.
func podTemplate(cs *appsv1alpha1.CloneSet) any { return cs.Spec.Template }

// liveLookups is the most podsToDelete names a request may have looked up in the API when the
// cache does not hold them: a pod created a moment before it is listed is found even if the
// cache has not seen it yet, while a long list of names that are no pods costs no more than
// this many API reads.
const liveLookups = 5

// NewValidatingHandler returns the validating handler, which also enforces deletion
// protection through guard. It gets the pods named in spec.scaleStrategy.podsToDelete from cached; when no
// more than liveLookups of them are missing there, it looks those up through live.
func NewValidatingHandler(dec admission.Decoder, cached, live client.Reader, gates featuregate.FeatureGate, guard *deletionprotection.Guard) admission.Handler {
	r := rules{shortHash: gates.Enabled(features.CloneSetShortHash)}
	kind := admit.Kind{Name: "cloneset", Decoder: dec, Namespaced: true, WithOld: true}
	return admit.Validating(kind, func(ctx context.Context, cs, old *appsv1alpha1.CloneSet) (field.ErrorList, error) {
		pods, err := podsToDelete(ctx, cached, live, cs, old)
		if err != nil {
			return nil, err
		}
		return validateCloneSet(cs, old, r, pods...), nil
	}).ProtectDeletion(guard, validateDeletion)
}

// podsToDelete gets the pods of cs's namespace newly listed in podsToDelete, from cached and,
// when few are missing there, from live; missing ones are left out for the validation to
// report.
func podsToDelete(ctx context.Context, cached, live client.Reader, cs, old *appsv1alpha1.CloneSet) ([]*corev1.Pod, error) {
	names := sets.New(cs.Spec.ScaleStrategy.PodsToDelete...)
	if old != nil {
		names.Delete(old.Spec.ScaleStrategy.PodsToDelete...)
	}
	var pods []*corev1.Pod
	var missing []string
	get := func(r client.Reader, name string) (bool, error) {
		pod, err := admit.Pod(ctx, r, cs.Namespace, name)
		if pod != nil {
			pods = append(pods, pod)
		}
		return pod != nil, err
	}
	for _, name := range sets.List(names) {
		found, err := get(cached, name)
		if err != nil {
			return nil, err
		}
		if !found {
			missing = append(missing, name)
		}
	}
	if len(missing) > liveLookups {
		return pods, nil
	}
	for _, name := range missing {
		if _, err := get(live, name); err != nil {
			return nil, err
		}
	}
	return pods, nil
}
