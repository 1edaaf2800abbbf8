package kit

import (
	"context"
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
)

// EnqueueAll maps any event to a request for every object of list's kind, for a kind with few
// objects whose pass decides itself whether the event concerns it (a node or namespace change).
func EnqueueAll(c client.Reader, list client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []ctrl.Request {
		l := list.DeepCopyObject().(client.ObjectList)
		if err := c.List(ctx, l); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "List every object for an event", "list", fmt.Sprintf("%T", list))
			return nil
		}
		var out []ctrl.Request
		_ = apimeta.EachListItem(l, func(o runtime.Object) error {
			out = append(out, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(o.(client.Object))})
			return nil
		})
		return out
	}
}

// Lookup reads the object under key into obj; found is false, without error, when there is none.
func Lookup(ctx context.Context, c client.Reader, key client.ObjectKey, obj client.Object) (found bool, err error) {
	if err := c.Get(ctx, key, obj); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return true, nil
}
