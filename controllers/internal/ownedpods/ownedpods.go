package ownedpods

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
)

// ExpectationTimeout is how long a reconcile waits for the cache to see its own writes before it
// stops trusting them and acts on what it sees.
const ExpectationTimeout = 5 * time.Minute

// Queue is the work queue a pod event handler feeds.
type Queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// Handler maps pod events to the workload of Kind that controls the pod and records in Scale and
// Update what the cache has seen of the controller's own writes.
type Handler struct {
	// Kind is the workload kind whose controller references count.
	Kind schema.GroupVersionKind
	// Scale and Update are the controller's expectations.
	Scale  *expectations.Scale
	Update *expectations.ResourceVersion
	// CreateName is the name a pod creation is awaited under in Scale; nil means the pod's name.
	CreateName func(client.Object) string
	// EnqueueReleased, when set, also enqueues the former owner of a pod whose controller
	// reference was removed, so that it replaces the pod.
	EnqueueReleased bool
	// Orphan, when set, is called with a pod created or updated without a controller of Kind, so
	// that the workloads which may adopt it are enqueued.
	Orphan func(ctx context.Context, pod client.Object, q Queue)
	// UpdateBatch, when set, is how long the reconcile a pod update asks for waits for the
	// updates of other pods of the same workload, so that one reconcile takes them all (see
	// UpdateBatch, the constant). Creations and deletions are not delayed.
	UpdateBatch time.Duration
	// IgnoreUpdate, when set, says that a pod update, which keeps the pod's owner, labels and
	// deletion timestamp, cannot change the owner's status or plan, so the owner is not queued
	// for it; what the cache saw of the controller's writes is observed all the same.
	IgnoreUpdate func(ctx context.Context, owner reconcile.Request, old, pod client.Object) bool
}

// UpdateBatch is the pod update batching period of the workload controllers. While a thousand
// pods start or update, their status changes arrive a few milliseconds apart; a reconcile of the
// whole workload for each of them spent the manager's CPU and wrote the workload's status
// hundreds of times a minute. A tenth of a second groups them and delays no rollout noticeably.
const UpdateBatch = 100 * time.Millisecond

// Owner returns the request of the workload of kind that controls obj, if one does.
func Owner(kind schema.GroupVersionKind, obj client.Object) (reconcile.Request, bool) {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != kind.Kind || ref.APIVersion != kind.GroupVersion().String() {
		return reconcile.Request{}, false
	}
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}}, true
}

// EventHandler returns h as a controller-runtime event handler for pods.
func (h Handler) EventHandler() handler.TypedEventHandler[client.Object, reconcile.Request] {
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[client.Object], q Queue) {
			h.Create(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q Queue) {
			h.Updated(ctx, e.ObjectOld, e.ObjectNew, q)
		},
		DeleteFunc: func(_ context.Context, e event.TypedDeleteEvent[client.Object], q Queue) {
			h.Delete(e.Object, q)
		},
	}
}

// Create handles a pod the cache has seen created: it observes the creation (and the deletion,
// for a pod that arrives already terminating) and enqueues the owner.
func (h Handler) Create(ctx context.Context, pod client.Object, q Queue) {
	req, ok := Owner(h.Kind, pod)
	if !ok {
		h.orphan(ctx, pod, q)
		return
	}
	name := pod.GetName()
	if h.CreateName != nil {
		name = h.CreateName(pod)
	}
	h.Scale.Observe(req.String(), expectations.Create, name)
	if pod.GetDeletionTimestamp() != nil {
		h.Scale.Observe(req.String(), expectations.Delete, pod.GetName())
	}
	q.Add(req)
}

// Updated handles a pod update: it observes a deletion that began and the new resourceVersion,
// and enqueues the owner, and with EnqueueReleased the owner the pod was just released from.
func (h Handler) Updated(ctx context.Context, old, pod client.Object, q Queue) {
	if req, ok := Owner(h.Kind, pod); ok {
		if pod.GetDeletionTimestamp() != nil {
			h.Scale.Observe(req.String(), expectations.Delete, pod.GetName())
		}
		h.Update.Observe(pod)
		switch {
		case h.ignore(ctx, req, old, pod):
		case h.UpdateBatch > 0:
			q.AddAfter(req, h.UpdateBatch)
		default:
			q.Add(req)
		}
	} else {
		h.orphan(ctx, pod, q)
	}
	if !h.EnqueueReleased {
		return
	}
	if req, ok := Owner(h.Kind, old); ok && metav1.GetControllerOf(pod) == nil {
		q.Add(req)
	}
}

// Delete handles a pod the cache has seen deleted: it observes the deletion, forgets the pod's
// resourceVersion and enqueues the owner.
func (h Handler) Delete(pod client.Object, q Queue) {
	req, ok := Owner(h.Kind, pod)
	if !ok {
		return
	}
	h.Scale.Observe(req.String(), expectations.Delete, pod.GetName())
	h.Update.Forget(pod.GetUID())
	q.Add(req)
}

// ignore reports whether the update of pod from old need not queue owner (IgnoreUpdate).
func (h Handler) ignore(ctx context.Context, owner reconcile.Request, old, pod client.Object) bool {
	if h.IgnoreUpdate == nil || pod.GetDeletionTimestamp() != nil || !reflect.DeepEqual(old.GetLabels(), pod.GetLabels()) ||
		!reflect.DeepEqual(metav1.GetControllerOf(old), metav1.GetControllerOf(pod)) {
		return false
	}
	return h.IgnoreUpdate(ctx, owner, old, pod)
}

func (h Handler) orphan(ctx context.Context, pod client.Object, q Queue) {
	if h.Orphan != nil {
		h.Orphan(ctx, pod, q)
	}
}

// AwaitScale reports whether the reconcile of key must wait (and requeue) because the cache has
// not seen all of the pod creations and deletions it made. After ExpectationTimeout it stops
// waiting, forgets what it awaited and lets the reconcile act on what the cache shows.
func AwaitScale(log logr.Logger, exp *expectations.Scale, key string) bool {
	wait, _ := AwaitScaleFor(log, exp, key, false)
	return wait
}

// OverdueRequeue is how soon a reconcile looks again after it forgot, under
// ForceDeleteTimeoutExpectationGate, the scale expectations that waited past ExpectationTimeout
// (1.8's ten seconds).
const OverdueRequeue = 10 * time.Second

// AwaitScaleFor is AwaitScale with 1.8's ForceDeleteTimeoutExpectationGate in force: the
// expectations that waited past ExpectationTimeout are forgotten, and the reconcile waits
// OverdueRequeue more before it acts on what the cache shows, instead of acting at once. requeue
// is how soon to look again while it waits: until the expectations time out, as in 1.8. The
// cache's event of each awaited create or delete enqueues the owner (Handler), so that is only
// the fallback: a shorter one made every pass that waited, one for each event of a large batch
// still on its way, come back once more after the batch was seen.
func AwaitScaleFor(log logr.Logger, exp *expectations.Scale, key string, force bool) (wait bool, requeue time.Duration) {
	ok, waited := exp.Satisfied(key)
	if ok {
		return false, 0
	}
	if waited < ExpectationTimeout {
		log.V(4).Info("Waiting for the cache to see our pod writes", "pending", exp.Pending(key))
		return true, ExpectationTimeout - waited
	}
	pending := exp.Pending(key)
	exp.Forget(key)
	if force {
		log.Info("Cache did not see our pod writes in time; forgot them and will look again", "pending", pending, "after", OverdueRequeue)
		return true, OverdueRequeue
	}
	log.Info("Cache did not see our pod writes in time; acting on what it shows", "pending", pending)
	return false, 0
}

// AwaitUpdates reports whether the reconcile must wait (and requeue) because the cached copy of
// one of pods predates the controller's last update of it, for at most ExpectationTimeout.
func AwaitUpdates(log logr.Logger, exp *expectations.ResourceVersion, pods []*corev1.Pod) bool {
	for _, p := range pods {
		if ok, waited := exp.Satisfied(p); !ok && waited < ExpectationTimeout {
			log.V(4).Info("Waiting for the cache to see our pod update", "Pod", klog.KObj(p))
			return true
		}
	}
	return false
}

// List lists the pods in owner's namespace that selector (the owner's spec.selector) matches
// and owner controls, terminating ones included, and returns the parsed selector. It reads them
// from ControllerIndex, which the reader c must have (the manager's cache: see Index), so the
// cost is the owner's pods, not the namespace's. The pods are the informer cache's own objects,
// listed without a copy (at a thousand pods a copy was most of a reconcile's CPU and
// allocations): read them only, and write a copy.
func List(ctx context.Context, c client.Reader, owner metav1.Object, selector *metav1.LabelSelector) ([]*corev1.Pod, labels.Selector, error) {
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return nil, nil, fmt.Errorf("read spec.selector: %w", err)
	}
	controlled, err := Controlled(ctx, c, owner.GetNamespace(), owner.GetUID())
	if err != nil {
		return nil, nil, err
	}
	out := controlled[:0]
	for _, p := range controlled {
		if sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out, sel, nil
}
