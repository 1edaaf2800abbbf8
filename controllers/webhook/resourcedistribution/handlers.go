package resourcedistribution

import (
	"context"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/resourcedistribution"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
)

// ValidatingPath is the 1.8 path of the ResourceDistribution validating webhook.
const ValidatingPath = "/validate-apps-kruise-io-v1alpha1-resourcedistribution"

// Handlers returns the ResourceDistribution validating handler by its 1.8 path. It is served
// whatever the gates: with ResourceDistributionGate off it refuses every ResourceDistribution,
// as 1.8 does, rather than admitting one nothing will act on.
func Handlers(mgr ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	h := NewHandler(mgr.GetClient(), d.ManagerNamespace)
	h.gates = d.Gates
	h.excluded = sets.New(d.DistributionExcludedNamespaces...)
	if d.DistributionCheckAuthorRights {
		h.reviews = mgr.GetClient()
	}
	return map[string]admission.Handler{ValidatingPath: h}
}

// Handler refuses ResourceDistributions that break a rule, with every field error.
type Handler struct {
	decoder admission.Decoder
	// dryRun creates the resource with dry run in namespace, so the apiserver judges it.
	dryRun    client.Writer
	namespace string
	// gates, when set, must have ResourceDistributionGate on for anything to be admitted.
	gates featuregate.FeatureGate
	// excluded are the namespaces a new or changed spec may not name in includedNamespaces.
	excluded sets.Set[string]
	// reviews, when set, asks the apiserver whether the author of a new or changed spec may
	// write the copies where they go.
	reviews client.Writer
}

// NewHandler returns the handler; dryRun and namespace check spec.resource by a dry-run
// creation there (nil dryRun skips it).
func NewHandler(dryRun client.Writer, namespace string) *Handler {
	return &Handler{decoder: admission.NewDecoder(apis.NewScheme()), dryRun: dryRun, namespace: namespace}
}

// Handle answers one admission request.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	if h.gates != nil && !h.gates.Enabled(features.ResourceDistributionGate) {
		return admission.Errored(http.StatusForbidden, fmt.Errorf("feature gate %s is not enabled; turn it on with --feature-gates=%s=true (chart value featureGates)", features.ResourceDistributionGate, features.ResourceDistributionGate))
	}
	rd := &appsv1alpha1.ResourceDistribution{}
	if err := h.decoder.Decode(req, rd); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode resourcedistribution: %w", err))
	}
	var old *appsv1alpha1.ResourceDistribution
	if req.Operation == admissionv1.Update {
		old = &appsv1alpha1.ResourceDistribution{}
		if err := h.decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode old resourcedistribution: %w", err))
		}
		if rd.DeletionTimestamp != nil {
			return admission.Allowed("")
		}
	}
	errs := validateResourceDistribution(rd, old)
	if len(errs) == 0 && h.dryRun != nil && h.namespace != "" {
		errs = append(errs, h.dryRunResource(ctx, rd)...)
	}
	if len(errs) > 0 {
		return admission.Errored(http.StatusUnprocessableEntity, errs.ToAggregate())
	}
	if old != nil && apiequality.Semantic.DeepEqual(old.Spec, rd.Spec) {
		return admission.Allowed("")
	}
	errs = validateExcluded(&rd.Spec.Targets, h.excluded)
	if len(errs) == 0 && h.reviews != nil {
		var err error
		if errs, err = authorRights(ctx, h.reviews, req.UserInfo, rd); err != nil {
			return admission.Errored(http.StatusInternalServerError, fmt.Errorf("check the author's rights: %w", err))
		}
	}
	if len(errs) > 0 {
		return admission.Errored(http.StatusForbidden, errs.ToAggregate())
	}
	return admission.Allowed("")
}

// dryRunResource has the apiserver judge spec.resource by creating it with dry run.
func (h *Handler) dryRunResource(ctx context.Context, rd *appsv1alpha1.ResourceDistribution) field.ErrorList {
	path := field.NewPath("spec", "resource")
	obj, err := resourcedistribution.DecodeResource(rd.Spec.Resource.Raw)
	if err != nil {
		return field.ErrorList{field.Invalid(path, "", err.Error())}
	}
	obj.SetNamespace(h.namespace)
	obj.SetResourceVersion("")
	err = h.dryRun.Create(ctx, obj, client.DryRunAll)
	if err == nil || apierrors.IsAlreadyExists(err) {
		return nil
	}
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		return field.ErrorList{field.Invalid(path, obj.GetName(), fmt.Sprintf("the apiserver refuses it as a %s: %v", obj.GetKind(), err))}
	}
	return field.ErrorList{field.InternalError(path, fmt.Errorf("dry-run creation of the resource: %w", err))}
}
