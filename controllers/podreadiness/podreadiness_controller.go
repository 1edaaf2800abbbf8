package podreadiness

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcondition"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Name is the controller's name, also its key for --<name>-workers.
const Name = "podreadiness"

// DefaultWorkers is the default of --podreadiness-workers.
const DefaultWorkers = 10

// SetupWithManager registers the pod readiness controller with mgr.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	clk := d.Clock
	r := &Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Clock: clk}
	// Only pods that still wait for their first condition are worth a reconcile.
	needsCondition := predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return needsInitialCondition(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return needsInitialCondition(e.ObjectNew) },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(e event.GenericEvent) bool { return needsInitialCondition(e.Object) },
	}
	return kit.Setup(mgr, d, Name, r, func(b *kit.Builder) *kit.Builder {
		return b.For(&corev1.Pod{}, builder.WithPredicates(needsCondition))
	})
}

// Reconciler adds the first KruisePodReady and InPlaceUpdateReady conditions to gated pods.
type Reconciler struct {
	Client client.Client
	// Reader reads the apiserver itself when the condition write conflicted; nil reads through
	// Client.
	Reader client.Reader
	Clock  clock.PassiveClock
}

// Reconcile gets the pod and, when it needs them, patches in its first conditions (see
// podcondition.Initial). The patch carries the pod's resourceVersion: if the kubelet or a workload
// wrote the pod meanwhile, the patch conflicts and is tried again on the pod read anew, which
// leaves a condition a workload wrote in between alone.
//
// A new pod is written by the scheduler and the kubelet in its first seconds, so the patch
// conflicts about once per pod whatever it starts from (reading the pod from the apiserver
// first did not make it rarer, only cost a read); it starts from the cache's copy and rereads
// from the apiserver only after a conflict.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return kit.Object[*corev1.Pod]{Reader: r.Client, Kind: "Pod", KeepDeleting: true, Pass: r.setInitial}.Reconcile(ctx, req)
}

func (r *Reconciler) setInitial(ctx context.Context, pod *corev1.Pod) (ctrl.Result, error) {
	set, err := podcondition.SetInitial(ctx, r.Client, r.Reader, pod, metav1.NewTime(r.Clock.Now()))
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	for _, c := range set {
		ctrl.LoggerFrom(ctx).V(4).Info("Set the pod's first readiness condition", "condition", c.Type, "status", c.Status)
	}
	return ctrl.Result{}, nil
}
