package deletionprotection

import (
	"context"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
)

// Guard is what every DELETE webhook that enforces the label shares: whether a request is
// checked at all, and the answer to a check's verdict. Kind handlers decode the object and run
// their check; the Guard turns the verdict into the response.
type Guard struct {
	gates featuregate.FeatureGate
	// namespaces reads the namespace of a refused object; nil never lets a refusal through.
	namespaces client.Reader
	// inTerminatingNamespace lets a refused deletion through when the object's namespace is
	// being deleted.
	inTerminatingNamespace bool
	// metrics counts refusals; nil counts nothing.
	metrics *Metrics
}

// NewGuard returns a Guard. With inTerminatingNamespace, a deletion the label would refuse goes
// through when namespaces says the object's namespace is being deleted.
func NewGuard(gates featuregate.FeatureGate, namespaces client.Reader, inTerminatingNamespace bool) *Guard {
	return &Guard{gates: gates, namespaces: namespaces, inTerminatingNamespace: inTerminatingNamespace && namespaces != nil}
}

// WithMetrics makes the Guard count its refusals in m.
func (g *Guard) WithMetrics(m *Metrics) *Guard {
	g.metrics = m
	return g
}

// GuardFor returns the Guard the manager's options ask for; it reads namespaces through the API
// reader, and only for a deletion the label refuses, and counts refusals in the manager's
// metrics registry.
func GuardFor(mgr ctrl.Manager, d setup.Deps) *Guard {
	g := NewGuard(d.Gates, mgr.GetAPIReader(), d.DeletionAllowedInTerminatingNamespace)
	if m, err := NewMetrics(ctrlmetrics.Registry); err == nil {
		g.metrics = m
	} else {
		mgr.GetLogger().WithName("deletion-protection").Error(err, "Registering the deletion protection metrics; refusals are not counted")
	}
	return g
}

// Checks reports whether req is a deletion to check: ResourcesDeletionProtection is on and the
// apiserver sent the object being deleted.
func (g *Guard) Checks(req admission.Request) bool {
	return req.Operation == admissionv1.Delete && len(req.OldObject.Raw) > 0 && g.gates.Enabled(features.ResourcesDeletionProtection)
}

// Answer answers a deletion that a check judged: allowed when refusal is nil; allowed too when
// the Guard lets deletions in terminating namespaces through and the object's namespace is
// being deleted; otherwise 403 with the refusal, which is logged.
func (g *Guard) Answer(ctx context.Context, req admission.Request, refusal error) admission.Response {
	if refusal == nil {
		return admission.Allowed("")
	}
	if g.terminating(ctx, req.Namespace) {
		ctrl.LoggerFrom(ctx).WithName("deletion-protection").Info("Allowed a protected deletion in a terminating namespace",
			"user", req.UserInfo.Username, "kind", req.Kind.Kind, "object", klog.KRef(req.Namespace, req.Name))
		return admission.Allowed("namespace " + req.Namespace + " is being deleted")
	}
	Audit(ctx, req, refusal)
	g.metrics.refused(req)
	return admission.Errored(http.StatusForbidden, refusal)
}

// terminating reports whether the Guard lets deletions in namespace through because it is being
// deleted. A namespace that cannot be read keeps the refusal.
func (g *Guard) terminating(ctx context.Context, namespace string) bool {
	if !g.inTerminatingNamespace || namespace == "" {
		return false
	}
	ns := &corev1.Namespace{}
	if err := g.namespaces.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		ctrl.LoggerFrom(ctx).WithName("deletion-protection").Error(err, "Reading the namespace of a protected object; the refusal stands", "namespace", klog.KRef("", namespace))
		return false
	}
	return ns.DeletionTimestamp != nil
}
