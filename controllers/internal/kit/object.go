package kit

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Pass is a kind's work on a root object the prologue found.
type Pass[T client.Object] func(ctx context.Context, obj T) (ctrl.Result, error)

// Object is the Reconcile prologue of a kind whose root object is T (a pointer type such as
// *appsv1alpha1.CloneSet): read the object, forget a gone one, put it on the logger, and leave a
// deleting one alone, then run the kind's Pass.
type Object[T client.Object] struct {
	// Reader reads the object, usually the manager's cached client.
	Reader client.Reader
	// Kind is the object's UpperCamel kind: the logger's key and the read error's context.
	Kind string
	// Gone, when set, forgets what the kind kept for an object that is not found any more.
	Gone func(req ctrl.Request)
	// Deleting, when set, is the pass over an object being deleted (finalizers, say); unset, such
	// an object ends the pass, unless KeepDeleting.
	Deleting Pass[T]
	// KeepDeleting runs Pass on an object being deleted too.
	KeepDeleting bool
	// Pass is the kind's work on a found object.
	Pass Pass[T]
}

// Reconcile runs the prologue and then the kind's pass.
func (o Object[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	if err := o.Reader.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			if o.Gone != nil {
				o.Gone(req)
			}
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, wrapGet(o.Kind, err)
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues(o.Kind, klog.KObj(obj)))
	if obj.GetDeletionTimestamp() != nil && !o.KeepDeleting {
		if o.Deleting == nil {
			return ctrl.Result{}, nil
		}
		return o.Deleting(ctx, obj)
	}
	return o.Pass(ctx, obj)
}

// Forget adapts an expectations' Forget, keyed by the request's string, to Object.Gone.
func Forget(forget func(key string)) func(ctrl.Request) {
	return func(req ctrl.Request) { forget(req.String()) }
}

// Key is the key under which a pass over obj finds what the kind keeps for it: the string of
// the request that names obj, as Forget uses it.
func Key(obj client.Object) string {
	return ctrl.Request{NamespacedName: client.ObjectKeyFromObject(obj)}.String()
}

// ErrorOnly adapts a step that returns only an error (a finalizer's clean-up, say) to a Pass.
func ErrorOnly[T client.Object](step func(context.Context, T) error) Pass[T] {
	return func(ctx context.Context, obj T) (ctrl.Result, error) { return ctrl.Result{}, step(ctx, obj) }
}

// NodeAnd is the prologue of a kind that keeps one cluster-scoped object per Node under the
// node's name: it puts the object's name on the logger under kind and reads the Node and the
// object named by req. Either is nil when it does not exist.
func NodeAnd[T client.Object](ctx context.Context, c client.Reader, kind string, req ctrl.Request) (context.Context, *corev1.Node, T, error) {
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues(kind, klog.KRef("", req.Name)))
	var none T
	node := &corev1.Node{}
	if found, err := Lookup(ctx, c, req.NamespacedName, node); err != nil {
		return ctx, nil, none, fmt.Errorf("get node: %w", err)
	} else if !found {
		node = nil
	}
	obj := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	if found, err := Lookup(ctx, c, req.NamespacedName, obj); err != nil || !found {
		return ctx, node, none, wrapGet(kind, err)
	}
	return ctx, node, obj, nil
}

// DeleteOfGoneNode deletes obj, the object NodeAnd found for a Node that is gone or going, unless
// it is already being deleted, and logs that under kind.
func DeleteOfGoneNode(ctx context.Context, c client.Writer, kind string, obj client.Object) error {
	if obj.GetDeletionTimestamp() != nil {
		return nil
	}
	if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s of a gone node: %w", strings.ToLower(kind), err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleted " + kind + " of a gone node")
	return nil
}

func wrapGet(kind string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("get %s: %w", kind, err)
}
