package kit

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Builder is controller-runtime's controller builder, to which a kind adds its watches.
type Builder = builder.Builder

// Setup registers the controller called name (also its --<name>-workers flag) with r as its
// reconciler: watches adds what it watches (For, Owns, Watches) to the builder.
func Setup(mgr ctrl.Manager, d setup.Deps, name string, r reconcile.Reconciler, watches func(*Builder) *Builder) error {
	b := watches(ctrl.NewControllerManagedBy(mgr).Named(name))
	if err := b.WithOptions(controller.Options{MaxConcurrentReconciles: d.Workers(name)}).Complete(r); err != nil {
		return fmt.Errorf("set up %s controller: %w", name, err)
	}
	return nil
}
