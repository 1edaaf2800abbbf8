package kit

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// LateWatches adds watches to a running controller on kinds known only at run time: the custom
// workloads a whitelist of the kruise-configuration ConfigMap names, which may be listed (and
// their CRDs installed) after the manager started. A kind is watched from the first pass that
// read one of its objects, once, through the manager's cache.
type LateWatches struct {
	cache   cache.Cache
	handler func(schema.GroupKind) handler.EventHandler
	preds   []predicate.Predicate
	ctrl    controller.Controller

	mu      sync.Mutex
	watched map[schema.GroupKind]bool
}

// SetupLate is Setup that also returns the controller's LateWatches; handler makes the event
// handler of a kind watched late, and preds filter its events.
func SetupLate(mgr ctrl.Manager, d setup.Deps, name string, r reconcile.Reconciler, watches func(*Builder) *Builder,
	handler func(schema.GroupKind) handler.EventHandler, preds ...predicate.Predicate) (*LateWatches, error) {
	c, err := build(mgr, d, name, r, watches)
	if err != nil {
		return nil, err
	}
	return &LateWatches{cache: mgr.GetCache(), handler: handler, preds: preds, ctrl: c}, nil
}

// Watch watches the kind of gvk from now on, unless it is watched already. A nil LateWatches
// watches nothing.
func (l *LateWatches) Watch(gvk schema.GroupVersionKind) error {
	if l == nil {
		return nil
	}
	gk := gvk.GroupKind()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.watched[gk] {
		return nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := l.ctrl.Watch(source.Kind(l.cache, client.Object(u), l.handler(gk), l.preds...)); err != nil {
		return fmt.Errorf("watch %s: %w", gk, err)
	}
	if l.watched == nil {
		l.watched = map[schema.GroupKind]bool{}
	}
	l.watched[gk] = true
	return nil
}
