package kit

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StaleRequeue is how soon an object whose status write lost to a newer object is looked at again.
const StaleRequeue = time.Second

// WriteStatus applies set to obj's status and, when that changed obj, writes the status with
// an update of the status subresource (the conflict policy is in the package comment). The
// Result is zero unless the write lost to a newer object; then it asks for another pass.
func WriteStatus[T client.Object](ctx context.Context, c client.Client, obj T, set func(T)) (ctrl.Result, error) {
	before := obj.DeepCopyObject()
	set(obj)
	if equality.Semantic.DeepEqual(before, obj) {
		return ctrl.Result{}, nil
	}
	err := c.Status().Update(ctx, obj)
	switch {
	case err == nil:
		ctrl.LoggerFrom(ctx).V(4).Info("Wrote status", "resourceVersion", obj.GetResourceVersion())
		return ctrl.Result{}, nil
	case apierrors.IsConflict(err):
		ctrl.LoggerFrom(ctx).V(4).Info("Status write lost to a newer object; looking again", "after", StaleRequeue)
		return ctrl.Result{RequeueAfter: StaleRequeue}, nil
	default:
		return ctrl.Result{}, fmt.Errorf("update status: %w", err)
	}
}

// Sooner is whichever of the results looks at the object again first; a zero result asks for
// nothing, so any other wins over it.
func Sooner(results ...ctrl.Result) ctrl.Result {
	var out ctrl.Result
	for _, r := range results {
		if out.IsZero() || (!r.IsZero() && r.RequeueAfter < out.RequeueAfter) {
			out = r
		}
	}
	return out
}

// After is a result that looks again after d when again holds, and the zero result otherwise.
func After(again bool, d time.Duration) ctrl.Result {
	if !again {
		return ctrl.Result{}
	}
	return ctrl.Result{RequeueAfter: d}
}
