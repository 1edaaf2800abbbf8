package cloneset

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podsort"
	"github.com/kruise-addon/kruise-addon/features"
)

// ignoreUpdate is the pod handler's filter under CloneSetEventHandlerOptimization: it reads the
// pod's CloneSet from the cache and asks ignorePodUpdate. A CloneSet it cannot read is queued.
func (r *Reconciler) ignoreUpdate(ctx context.Context, owner reconcile.Request, old, cur client.Object) bool {
	oldPod, ok1 := old.(*corev1.Pod)
	curPod, ok2 := cur.(*corev1.Pod)
	cs := &appsv1alpha1.CloneSet{}
	if !ok1 || !ok2 || r.Client.Get(ctx, owner.NamespacedName, cs) != nil {
		return false
	}
	return ignorePodUpdate(cs, oldPod, curPod, r.Gates.Enabled(features.InPlaceWorkloadVerticalScaling))
}

// ignorePodUpdate reports whether an update of one of cs's pods, which kept the pod's labels,
// owner and deletion timestamp, can change neither the CloneSet's status nor its plan, as 1.8
// decides it: the pod's generation, readiness and lifecycle hook finalizers are as they were,
// and, for a pod that an in-place update may be moving (it has the InPlaceUpdateReady gate or
// is not in Normal), the update did not just finish with the pod still marked not ready for it.
// With resize (InPlaceWorkloadVerticalScaling), a pod whose update finished is never ignored:
// its new resources may be what changed.
func ignorePodUpdate(cs *appsv1alpha1.CloneSet, old, cur *corev1.Pod, resize bool) bool {
	if old.Generation != cur.Generation || hookFinalizersChanged(cs.Spec.Lifecycle, old, cur) || podsort.IsReady(old) != podsort.IsReady(cur) {
		return false
	}
	state := appspub.LifecycleStateType(cur.Labels[appspub.LifecycleStateKey])
	if !inplaceupdate.HasReadinessGate(cur) && state == appspub.LifecycleStateNormal {
		return true
	}
	st, err := inplaceupdate.State(cur)
	if err != nil || st == nil || !inplaceupdate.ContainersUpdated(cur, st) {
		return true
	}
	if c := inplaceupdate.Condition(cur); c == nil || c.Status != corev1.ConditionTrue {
		return false
	}
	return !resize
}

// hookFinalizersChanged reports whether a finalizer of the preDelete or inPlaceUpdate hook came
// or went.
func hookFinalizersChanged(lc *appspub.Lifecycle, old, cur *corev1.Pod) bool {
	if lc == nil {
		return false
	}
	for _, hook := range []*appspub.LifecycleHook{lc.PreDelete, lc.InPlaceUpdate} {
		if hook == nil {
			continue
		}
		for _, f := range hook.FinalizersHandler {
			if controllerutil.ContainsFinalizer(old, f) != controllerutil.ContainsFinalizer(cur, f) {
				return true
			}
		}
	}
	return false
}
