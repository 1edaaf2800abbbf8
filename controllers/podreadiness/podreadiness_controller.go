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

	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
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
	r := NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), clk)
	// Only pods that still wait for their first condition are worth a reconcile. Every event
	// tells the reconciler what the cache has seen of its own writes, including the event of
	// a write, which no longer needs a reconcile.
	needsCondition := predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return needsInitialCondition(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool {
			r.written.Observe(e.ObjectNew)
			return needsInitialCondition(e.ObjectNew)
		},
		DeleteFunc: func(e event.DeleteEvent) bool {
			r.written.Forget(e.Object.GetUID())
			return false
		},
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
	// written holds, for each pod whose conditions this controller wrote, the resourceVersion
	// of the write until the cache shows it.
	written *expectations.ResourceVersion
}

// NewReconciler returns a Reconciler that reads pods through c, rereads them through fresh after
// a conflict and dates its conditions by clk.
func NewReconciler(c client.Client, fresh client.Reader, clk clock.PassiveClock) *Reconciler {
	return &Reconciler{Client: c, Reader: fresh, Clock: clk, written: expectations.NewResourceVersion(clk)}
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
//
// The pod's events keep coming while the write is under way (the binding, the kubelet's
// status), so a pod is often reconciled again from a cached copy that predates the write: that
// pass writes nothing. Writing again from it only conflicted and reread the pod, at the cost of
// a worker, a write and a read; the write's own event brings the cache up to date, and with it
// the condition.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return kit.Object[*corev1.Pod]{Reader: r.Client, Kind: "Pod", KeepDeleting: true, Pass: r.setInitial}.Reconcile(ctx, req)
}

func (r *Reconciler) setInitial(ctx context.Context, pod *corev1.Pod) (ctrl.Result, error) {
	if seen, waited := r.written.Satisfied(pod); !seen && waited < ownedpods.ExpectationTimeout {
		ctrl.LoggerFrom(ctx).V(4).Info("Waiting for the cache to show the pod's first readiness conditions")
		return ctrl.Result{}, nil
	}
	written, set, err := podcondition.SetInitial(ctx, r.Client, r.Reader, pod, metav1.NewTime(r.Clock.Now()))
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if written != nil {
		r.written.Expect(written)
	}
	for _, c := range set {
		ctrl.LoggerFrom(ctx).V(4).Info("Set the pod's first readiness condition", "condition", c.Type, "status", c.Status)
	}
	return ctrl.Result{}, nil
}
