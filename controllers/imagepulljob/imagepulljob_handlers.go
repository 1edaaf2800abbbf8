package imagepulljob

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
)

// nodeImageEvents wakes the jobs that own a tag in a changed NodeImage, and every running job
// when a NodeImage appears or its labels change, since it may now be selected.
func (r *Reconciler) nodeImageEvents() kit.Events {
	return kit.Events{
		Create: func(ctx context.Context, _ client.Object) []client.ObjectKey {
			return r.running(ctx, "", false)
		},
		Update: func(ctx context.Context, old, cur client.Object) []client.ObjectKey {
			oldNI, ok1 := old.(*appsv1alpha1.NodeImage)
			newNI, ok2 := cur.(*appsv1alpha1.NodeImage)
			if !ok1 || !ok2 {
				return nil
			}
			var keys []client.ObjectKey
			if labelsChanged(oldNI.Labels, newNI.Labels) {
				keys = r.running(ctx, "", false)
			}
			return append(append(keys, owners(oldNI)...), owners(newNI)...)
		},
		Delete: func(_ context.Context, obj client.Object) []client.ObjectKey {
			if ni, ok := obj.(*appsv1alpha1.NodeImage); ok {
				return owners(ni)
			}
			return nil
		},
	}
}

// podEvents wakes the running jobs with a podSelector in a changed pod's namespace.
func (r *Reconciler) podEvents() kit.Events {
	pod := func(ctx context.Context, obj client.Object) []client.ObjectKey {
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			return r.running(ctx, p.Namespace, true)
		}
		return nil
	}
	return kit.Events{
		Create: pod,
		Update: func(ctx context.Context, _, cur client.Object) []client.ObjectKey { return pod(ctx, cur) },
		Delete: pod,
	}
}

// running names the unfinished jobs in namespace (all when empty), only those with a
// podSelector when podSelectorOnly.
func (r *Reconciler) running(ctx context.Context, namespace string, podSelectorOnly bool) []client.ObjectKey {
	list := &appsv1alpha1.ImagePullJobList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing ImagePullJobs to wake")
		return nil
	}
	var keys []client.ObjectKey
	for i := range list.Items {
		j := &list.Items[i]
		if j.Status.CompletionTime != nil || (podSelectorOnly && j.Spec.PodSelector == nil) {
			continue
		}
		keys = append(keys, client.ObjectKeyFromObject(j))
	}
	return keys
}

// owners names the jobs that own a tag of ni.
func owners(ni *appsv1alpha1.NodeImage) []client.ObjectKey {
	var keys []client.ObjectKey
	for _, img := range ni.Spec.Images {
		for _, tag := range img.Tags {
			for _, ref := range tag.OwnerReferences {
				if ref.Kind == controllerKind.Kind && ref.APIVersion == controllerKind.GroupVersion().String() {
					keys = append(keys, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name})
				}
			}
		}
	}
	return keys
}
