package deletionprotection

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
)

// The 1.8 paths of the DELETE webhooks for Kubernetes' own kinds.
const (
	DeploymentPath  = "/validate-apps-deployment"
	ReplicaSetPath  = "/validate-apps-replicaset"
	StatefulSetPath = "/validate-apps-statefulset"
	CRDPath         = "/validate-customresourcedefinition"
	NamespacePath   = "/validate-namespace"
	ServicePath     = "/validate-service"
	IngressPath     = "/validate-ingress"
)

// Handlers returns the deletion protection handlers by their 1.8 paths. Namespaces and CRDs are
// checked through the API reader: a Cascading check must count what exists now, and the
// manager does not cache every kind.
func Handlers(mgr ctrl.Manager, d setup.Deps) map[string]admission.Handler {
	checks := map[string]checkFunc{
		DeploymentPath: decoded(func(_ context.Context, _ *Handler, d *appsv1.Deployment) error {
			return Workload("Deployment", d, d.Spec.Replicas)
		}),
		ReplicaSetPath: decoded(func(_ context.Context, _ *Handler, rs *appsv1.ReplicaSet) error {
			return Workload("ReplicaSet", rs, rs.Spec.Replicas)
		}),
		StatefulSetPath: decoded(func(_ context.Context, _ *Handler, s *appsv1.StatefulSet) error {
			return Workload("StatefulSet", s, s.Spec.Replicas)
		}),
		CRDPath: decoded(func(ctx context.Context, h *Handler, crd *apiextensionsv1.CustomResourceDefinition) error {
			return CRD(ctx, h.reader, crd, h.gates.Enabled(features.DeletionProtectionForCRDCascadingGate))
		}),
		NamespacePath: decoded(func(ctx context.Context, h *Handler, ns *corev1.Namespace) error {
			return Namespace(ctx, h.reader, ns)
		}),
		ServicePath: alwaysOnly("Service"),
		IngressPath: alwaysOnly("Ingress"),
	}
	guard := GuardFor(mgr, d)
	out := make(map[string]admission.Handler, len(checks))
	for path, check := range checks {
		out[path] = &Handler{check: check, reader: mgr.GetAPIReader(), gates: d.Gates, guard: guard}
	}
	return out
}

// checkFunc decodes the object being deleted from raw and checks its deletion.
type checkFunc func(ctx context.Context, h *Handler, raw []byte) error

// Handler answers DELETE requests for one kind.
type Handler struct {
	check  checkFunc
	reader client.Reader
	gates  featuregate.FeatureGate
	guard  *Guard
}

// Handle refuses a protected deletion with 403 and the reason, and logs the refusal.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if h.check == nil || !h.guard.Checks(req) {
		return admission.Allowed("")
	}
	return h.guard.Answer(ctx, req, h.check(ctx, h, req.OldObject.Raw))
}

// Audit writes one refusal to the manager's log: who asked, for what, and why it was refused.
func Audit(ctx context.Context, req admission.Request, reason error) {
	ctrl.LoggerFrom(ctx).WithName("deletion-protection").Info("Refused a deletion",
		"user", req.UserInfo.Username, "groups", req.UserInfo.Groups,
		"kind", req.Kind.Kind, "namespace", req.Namespace, "name", req.Name, "reason", reason.Error())
}

func decode(raw []byte, obj any) error {
	if err := json.Unmarshal(raw, obj); err != nil {
		return fmt.Errorf("decode the object being deleted: %w", err)
	}
	return nil
}

// decoded is the checkFunc that decodes the object being deleted into a new T and hands it to
// check.
func decoded[T any](check func(ctx context.Context, h *Handler, obj *T) error) checkFunc {
	return func(ctx context.Context, h *Handler, raw []byte) error {
		obj := new(T)
		if err := decode(raw, obj); err != nil {
			return err
		}
		return check(ctx, h, obj)
	}
}

func alwaysOnly(kind string) checkFunc {
	return func(_ context.Context, _ *Handler, raw []byte) error {
		u := &unstructured.Unstructured{}
		if err := decode(raw, &u.Object); err != nil {
			return err
		}
		return AlwaysOnly(kind, u)
	}
}
