package resourcedistribution

import (
	"context"
	"fmt"
	"net/http"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/resourcedistribution"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/admit"
	"github.com/kruise-addon/kruise-addon/features"
)

// Handlers serves the ResourceDistribution validating handler at its 1.8 path,
// /validate-apps-kruise-io-v1alpha1-resourcedistribution. It is served whatever the gates: with
// ResourceDistributionGate off it refuses every ResourceDistribution, as 1.8 does, rather than
// admitting one nothing will act on.
var Handlers = admit.Webhooks{Group: "apps.kruise.io", Version: "v1alpha1", Name: "resourcedistribution", Validating: validatingHandler}.Handlers

func validatingHandler(e admit.Env) admission.Handler {
	p := policy{dryRun: e.Manager.GetClient(), namespace: e.ManagerNamespace, excluded: sets.New(e.DistributionExcludedNamespaces...)}
	if e.DistributionCheckAuthorRights {
		p.reviews = e.Manager.GetClient()
	}
	kind := admit.Kind{
		Name: "resourcedistribution", Decoder: e.Kind.Decoder, WithOld: true, PassDeleting: true,
		Gate: func() error {
			if e.Gates.Enabled(features.ResourceDistributionGate) {
				return nil
			}
			return admit.Refuse(http.StatusForbidden, admit.GateOff(features.ResourceDistributionGate))
		},
	}
	return admit.Validating(kind, p.validate)
}

// policy is what the handler checks beyond the object itself.
type policy struct {
	// dryRun creates the resource with dry run in namespace, so the apiserver judges it.
	dryRun    client.Writer
	namespace string
	// excluded are the namespaces a new or changed spec may not name in includedNamespaces.
	excluded sets.Set[string]
	// reviews, when set, asks the apiserver whether the author of a new or changed spec may
	// write the copies where they go.
	reviews client.Writer
}

// validate returns every field error of rd (422); a new or changed spec that names an excluded
// namespace, or that its author may not write everywhere it goes, is refused with 403.
func (p policy) validate(ctx context.Context, rd, old *appsv1alpha1.ResourceDistribution) (field.ErrorList, error) {
	errs := validateResourceDistribution(rd, old)
	if len(errs) == 0 && p.dryRun != nil && p.namespace != "" {
		errs = append(errs, p.dryRunResource(ctx, rd)...)
	}
	if len(errs) > 0 {
		return errs, nil
	}
	if old != nil && apiequality.Semantic.DeepEqual(old.Spec, rd.Spec) {
		return nil, nil
	}
	errs = validateExcluded(&rd.Spec.Targets, p.excluded)
	if len(errs) == 0 && p.reviews != nil {
		req, err := admission.RequestFromContext(ctx)
		if err != nil {
			return nil, fmt.Errorf("check the author's rights: %w", err)
		}
		if errs, err = authorRights(ctx, p.reviews, req.UserInfo, rd); err != nil {
			return nil, fmt.Errorf("check the author's rights: %w", err)
		}
	}
	if len(errs) > 0 {
		return nil, admit.Refuse(http.StatusForbidden, errs.ToAggregate())
	}
	return nil, nil
}

// dryRunResource has the apiserver judge spec.resource by creating it with dry run.
func (p policy) dryRunResource(ctx context.Context, rd *appsv1alpha1.ResourceDistribution) field.ErrorList {
	path := field.NewPath("spec", "resource")
	obj, err := resourcedistribution.DecodeResource(rd.Spec.Resource.Raw)
	if err != nil {
		return field.ErrorList{field.Invalid(path, "", err.Error())}
	}
	obj.SetNamespace(p.namespace)
	obj.SetResourceVersion("")
	err = p.dryRun.Create(ctx, obj, client.DryRunAll)
	if err == nil || apierrors.IsAlreadyExists(err) {
		return nil
	}
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		return field.ErrorList{field.Invalid(path, obj.GetName(), fmt.Sprintf("the apiserver refuses it as a %s: %v", obj.GetKind(), err))}
	}
	return field.ErrorList{field.InternalError(path, fmt.Errorf("dry-run creation of the resource: %w", err))}
}
