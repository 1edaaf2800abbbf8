package podreadiness

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Name is the controller's name, also its key for --<name>-workers.
const Name = "podreadiness"

// SetupWithManager registers the pod readiness controller with mgr.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	workers := d.Workers(Name)
	clk := d.Clock
	r := &Reconciler{Client: mgr.GetClient(), Clock: clk}
	// Only pods that still wait for their first condition are worth a reconcile.
	needsCondition := predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return needsInitialCondition(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return needsInitialCondition(e.ObjectNew) },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(e event.GenericEvent) bool { return needsInitialCondition(e.Object) },
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&corev1.Pod{}, builder.WithPredicates(needsCondition)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up %s controller: %w", Name, err)
	}
	return nil
}

// Reconciler adds the first KruisePodReady condition to gated pods.
type Reconciler struct {
	Client client.Client
	Clock  clock.PassiveClock
}

// Reconcile gets the pod and, when it needs one, patches in KruisePodReady True. The patch
// carries the pod's resourceVersion: if a workload wrote the condition meanwhile, the patch
// conflicts and the retry finds the condition there and leaves it alone.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, req.NamespacedName, pod); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("pod", klog.KObj(pod))

	want, ok := initialCondition(pod, metav1.NewTime(r.Clock.Now()))
	if !ok {
		return ctrl.Result{}, nil
	}
	orig := pod.DeepCopy()
	pod.Status.Conditions = append(pod.Status.Conditions, want)
	patch := client.StrategicMergeFrom(orig, client.MergeFromWithOptimisticLock{})
	if err := r.Client.Status().Patch(ctx, pod, patch); err != nil {
		return ctrl.Result{}, fmt.Errorf("patch pod %s status: %w", klog.KObj(pod), err)
	}
	log.V(4).Info("Set the pod's first readiness condition", "condition", want.Type, "status", want.Status)
	return ctrl.Result{}, nil
}
