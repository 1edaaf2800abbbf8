package workloadspread

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podsort"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread/podhook"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread/spread"
)

// Name is the controller's name, also its key for --workloadspread-workers.
const Name = "workloadspread"

// SetupWithManager registers the WorkloadSpread controller with mgr.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	r := &Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorderFor("workloadspread-controller"), Clock: d.Clock}
	err := ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&appsv1alpha1.WorkloadSpread{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podToSpread)).
		WithOptions(controller.Options{MaxConcurrentReconciles: d.Workers(Name)}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up %s controller: %w", Name, err)
	}
	return nil
}

// podToSpread maps a pod to the WorkloadSpread its annotation names.
func podToSpread(_ context.Context, obj client.Object) []reconcile.Request {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil
	}
	in, ok, err := spread.InjectedOf(pod)
	if err != nil || !ok || in.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: pod.Namespace, Name: in.Name}}}
}

// Reconciler keeps WorkloadSpread statuses and its pods' deletion costs.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Clock    clock.PassiveClock
}

// scope is what one pass reads.
type scope struct {
	ws       *appsv1alpha1.WorkloadSpread
	replicas int32
	// bySubset holds every pod of the WorkloadSpread by subset; "" for a subset no longer listed.
	bySubset map[string][]podEntry
}

// Reconcile reads the WorkloadSpread and its pods, writes deletion costs, writes the status when
// it changed, and deletes pods stuck unschedulable under Adaptive.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ws := &appsv1alpha1.WorkloadSpread{}
	if err := r.Client.Get(ctx, req.NamespacedName, ws); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ws.DeletionTimestamp != nil || ws.Spec.TargetReference == nil {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("WorkloadSpread", klog.KObj(ws))
	ctx = ctrl.LoggerInto(ctx, log)
	sc, err := r.read(ctx, ws)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.writeCosts(ctx, sc); err != nil {
		return ctrl.Result{}, err
	}
	res, err := computeStatus(ws, sc.bySubset, sc.replicas, r.Clock.Now())
	if err != nil {
		r.Recorder.Eventf(ws, corev1.EventTypeWarning, "InvalidSpec", "Cannot compute subset statuses: %v", err)
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	if !apiequality.Semantic.DeepEqual(res.status, ws.Status) {
		next := ws.DeepCopy()
		next.Status = res.status
		// Update, not patch: the write must fail if a webhook recorded a pod meanwhile.
		if err := r.Client.Status().Update(ctx, next); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{Requeue: true}, nil
			}
			return ctrl.Result{}, fmt.Errorf("update status: %w", err)
		}
		log.V(4).Info("Updated subset statuses")
	}
	for _, pod := range res.reschedule {
		if err := r.Client.Delete(ctx, pod, client.Preconditions{UID: &pod.UID}); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("delete unschedulable pod %s: %w", pod.Name, err)
		}
		r.Recorder.Eventf(ws, corev1.EventTypeNormal, "Reschedule", "Deleted pod %s, unschedulable in its subset, so its replacement goes to the next subset", pod.Name)
	}
	return ctrl.Result{RequeueAfter: res.requeueAfter}, nil
}

func (r *Reconciler) read(ctx context.Context, ws *appsv1alpha1.WorkloadSpread) (*scope, error) {
	replicas, err := podhook.TargetReplicas(ctx, r.Client, ws)
	if err != nil {
		return nil, err
	}
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(ws.Namespace)); err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	known := map[string]bool{}
	for _, s := range ws.Spec.Subsets {
		known[s.Name] = true
	}
	sc := &scope{ws: ws, replicas: replicas, bySubset: map[string][]podEntry{}}
	for i := range pods.Items {
		pod := &pods.Items[i]
		in, ok, err := spread.InjectedOf(pod)
		if err != nil || !ok || in.Name != ws.Name {
			continue
		}
		subset := in.Subset
		if !known[subset] {
			subset = ""
		}
		sc.bySubset[subset] = append(sc.bySubset[subset], podEntry{pod: pod, key: in.Key(pod.Name)})
	}
	return sc, nil
}

// writeCosts patches controller.kubernetes.io/pod-deletion-cost on the active pods whose value
// differs from the plan. Only targets whose scale-down reads the cost get it.
func (r *Reconciler) writeCosts(ctx context.Context, sc *scope) error {
	switch sc.ws.Spec.TargetReference.Kind {
	case "CloneSet", "Deployment", "ReplicaSet":
	default:
		return nil
	}
	activeBy := map[string][]*corev1.Pod{}
	for name, entries := range sc.bySubset {
		for _, e := range entries {
			if active(e.pod) {
				activeBy[name] = append(activeBy[name], e.pod)
			}
		}
	}
	costs, err := spread.DeletionCosts(sc.ws.Spec.Subsets, activeBy, sc.replicas)
	if err != nil {
		return reconcile.TerminalError(err)
	}
	for _, entries := range activeBy {
		for _, pod := range entries {
			want := costs[pod.Name]
			if pod.Annotations[podsort.DeletionCostAnnotation] == want {
				continue
			}
			patch := client.MergeFrom(pod.DeepCopy())
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[podsort.DeletionCostAnnotation] = want
			if err := r.Client.Patch(ctx, pod, patch); client.IgnoreNotFound(err) != nil {
				r.Recorder.Eventf(sc.ws, corev1.EventTypeWarning, "PatchPodDeletionCostFailed", "Cannot set the deletion cost of pod %s to %s: %v", pod.Name, want, err)
				return fmt.Errorf("patch deletion cost of pod %s: %w", pod.Name, err)
			}
		}
	}
	return nil
}
