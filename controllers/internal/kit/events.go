package kit

import (
	"context"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// KeysOf names the objects of a controller's kind that an event on a watched object concerns.
type KeysOf func(ctx context.Context, obj client.Object) []client.ObjectKey

// Map enqueues, for every event of a watched object, the objects keys names; on an update it
// asks about the object before and after the change, as handler.EnqueueRequestsFromMapFunc does.
func Map(keys KeysOf) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		return requests(keys(ctx, obj))
	})
}

// All enqueues every object of list's kind for any event of a watched object (see EnqueueAll).
func All(c client.Reader, list client.ObjectList) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(EnqueueAll(c, list))
}

// Events is an event handler written as what each kind of event enqueues: a kind that must
// tell a creation from an update or a deletion, or compare the object before and after an update.
// An unset field ignores that kind of event; generic events are ignored.
type Events struct {
	// Create names what a new object concerns.
	Create KeysOf
	// Update names what a change from old to cur concerns.
	Update func(ctx context.Context, old, cur client.Object) []client.ObjectKey
	// Delete names what a deleted object concerns.
	Delete KeysOf
}

// Handler is the event handler that enqueues what e names.
func (e Events) Handler() handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	add := func(q queue, keys []client.ObjectKey) {
		for _, r := range requests(keys) {
			q.Add(r)
		}
	}
	var f handler.Funcs
	if e.Create != nil {
		f.CreateFunc = func(ctx context.Context, ev event.CreateEvent, q queue) { add(q, e.Create(ctx, ev.Object)) }
	}
	if e.Update != nil {
		f.UpdateFunc = func(ctx context.Context, ev event.UpdateEvent, q queue) {
			add(q, e.Update(ctx, ev.ObjectOld, ev.ObjectNew))
		}
	}
	if e.Delete != nil {
		f.DeleteFunc = func(ctx context.Context, ev event.DeleteEvent, q queue) { add(q, e.Delete(ctx, ev.Object)) }
	}
	return f
}

func requests(keys []client.ObjectKey) []reconcile.Request {
	if len(keys) == 0 {
		return nil
	}
	out := make([]reconcile.Request, len(keys))
	for i, k := range keys {
		out[i] = reconcile.Request{NamespacedName: k}
	}
	return out
}

// SameKey enqueues the watched object's own key, for a kind that keeps one object per watched
// object under its name and namespace (a NodeImage or NodePodProbe per Node).
func SameKey() handler.EventHandler {
	return &handler.EnqueueRequestForObject{}
}

// ListKeys names every object of list, in its order.
func ListKeys(list client.ObjectList) []client.ObjectKey {
	var keys []client.ObjectKey
	_ = apimeta.EachListItem(list, func(o runtime.Object) error {
		keys = append(keys, client.ObjectKeyFromObject(o.(client.Object)))
		return nil
	})
	return keys
}
