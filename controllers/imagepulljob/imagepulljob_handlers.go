package imagepulljob

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// nodeImageHandler wakes the jobs that own a tag in a changed NodeImage, and every running job
// when a NodeImage appears or its labels change, since it may now be selected.
func (r *Reconciler) nodeImageHandler() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) {
			r.enqueueRunning(ctx, q, "", false)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
			oldNI, ok1 := e.ObjectOld.(*appsv1alpha1.NodeImage)
			newNI, ok2 := e.ObjectNew.(*appsv1alpha1.NodeImage)
			if !ok1 || !ok2 {
				return
			}
			if labelsChanged(oldNI.Labels, newNI.Labels) {
				r.enqueueRunning(ctx, q, "", false)
			}
			enqueueOwners(q, oldNI)
			enqueueOwners(q, newNI)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			if ni, ok := e.Object.(*appsv1alpha1.NodeImage); ok {
				enqueueOwners(q, ni)
			}
		},
	}
}

// podHandler wakes the running jobs with a podSelector in a changed pod's namespace.
func (r *Reconciler) podHandler() handler.EventHandler {
	pod := func(ctx context.Context, obj client.Object, q queue) {
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			r.enqueueRunning(ctx, q, p.Namespace, true)
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) { pod(ctx, e.Object, q) },
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) { pod(ctx, e.ObjectNew, q) },
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) { pod(ctx, e.Object, q) },
	}
}

// enqueueRunning adds the unfinished jobs in namespace (all when empty), only those with a
// podSelector when podSelectorOnly.
func (r *Reconciler) enqueueRunning(ctx context.Context, q queue, namespace string, podSelectorOnly bool) {
	list := &appsv1alpha1.ImagePullJobList{}
	if err := r.client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ImagePullJobs to wake")
		return
	}
	for i := range list.Items {
		j := &list.Items[i]
		if j.Status.CompletionTime != nil || (podSelectorOnly && j.Spec.PodSelector == nil) {
			continue
		}
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: j.Namespace, Name: j.Name}})
	}
}

func enqueueOwners(q queue, ni *appsv1alpha1.NodeImage) {
	for _, img := range ni.Spec.Images {
		for _, tag := range img.Tags {
			for _, ref := range tag.OwnerReferences {
				if ref.Kind == controllerKind.Kind && ref.APIVersion == controllerKind.GroupVersion().String() {
					q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}})
				}
			}
		}
	}
}
