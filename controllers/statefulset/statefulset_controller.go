package statefulset

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podowner"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Name is the controller's name and the kind of its --statefulset-workers flag.
const Name = "statefulset"

// controllerKind is the GroupVersionKind of the storage version, for owner references.
var controllerKind = appsv1beta1.GroupVersion.WithKind("StatefulSet")

// Reconciler reconciles Advanced StatefulSets.
type Reconciler struct {
	podowner.Base
}

// SetupWithManager registers the Advanced StatefulSet controller.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	r := newReconciler(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetEventRecorderFor("statefulset-controller"), d)
	return podowner.Setup(mgr, d, Name, podowner.Object(&r.Base, "StatefulSet", r.reconcile), func(b *kit.Builder) *kit.Builder {
		return b.For(&appsv1beta1.StatefulSet{}).
			Watches(&corev1.Pod{}, r.podHandler()).
			// A PVC's capacity and conditions move status.volumeClaims and a PVC resize along.
			Watches(&corev1.PersistentVolumeClaim{}, handler.EnqueueRequestsFromMapFunc(r.claimOwners)).
			Owns(&appsv1.ControllerRevision{})
	})
}

func newReconciler(c client.Client, live client.Reader, rec record.EventRecorder, d setup.Deps) *Reconciler {
	r := &Reconciler{Base: podowner.New(c, live, rec, d, nil)}
	r.CheckBudgets(d)
	return r
}

// reconcile moves one Advanced StatefulSet, found and not being deleted, towards its spec.
func (r *Reconciler) reconcile(ctx context.Context, set *appsv1beta1.StatefulSet) (ctrl.Result, error) {
	return podowner.Run(ctx, &r.Base, set, kit.PodOwnerPass[*scope, outcome]{
		Read: func(ctx context.Context) (*scope, error) { return r.readScope(ctx, set) },
		Pods: func(s *scope) []*corev1.Pod { return s.pods },
		Sync: r.sync, WriteStatus: r.writeStatus, Truncate: r.truncateHistory,
	}, r.preDownload)
}

// podHandler enqueues a pod's StatefulSet, records what the cache has seen of our own writes,
// and enqueues the StatefulSets whose selector an orphan pod matches, to adopt it.
func (r *Reconciler) podHandler() handler.TypedEventHandler[client.Object, reconcile.Request] {
	return r.PodHandler(ownedpods.Handler{Kind: controllerKind, EnqueueReleased: true, Orphan: r.enqueueAdopters})
}

// enqueueAdopters enqueues the StatefulSets in the namespace of an orphan pod whose selector
// matches it, so that one of them adopts it.
func (r *Reconciler) enqueueAdopters(ctx context.Context, obj client.Object, q ownedpods.Queue) {
	if metav1.GetControllerOf(obj) != nil || obj.GetDeletionTimestamp() != nil {
		return
	}
	var sets appsv1beta1.StatefulSetList
	if err := r.Client.List(ctx, &sets, client.InNamespace(obj.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List StatefulSets for an orphan pod", "Pod", klog.KObj(obj))
		return
	}
	for i := range sets.Items {
		sel, err := metav1.LabelSelectorAsSelector(sets.Items[i].Spec.Selector)
		if err == nil && !sel.Empty() && sel.Matches(labels.Set(obj.GetLabels())) {
			q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&sets.Items[i])})
		}
	}
}

// event records a Kubernetes event on the StatefulSet.
func (r *Reconciler) event(set *appsv1beta1.StatefulSet, typ, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(set, typ, reason, format, args...)
	}
}
