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
	_, err := build(mgr, d, name, r, watches)
	return err
}

func build(mgr ctrl.Manager, d setup.Deps, name string, r reconcile.Reconciler, watches func(*Builder) *Builder) (controller.Controller, error) {
	b := watches(ctrl.NewControllerManagedBy(mgr).Named(name))
	c, err := b.WithOptions(controller.Options{MaxConcurrentReconciles: d.Workers(name)}).Build(r)
	if err != nil {
		return nil, fmt.Errorf("set up %s controller: %w", name, err)
	}
	return c, nil
}
