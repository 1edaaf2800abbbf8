package podunavailablebudget

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/pubcheck"
	"github.com/kruise-addon/kruise-addon/controllers/internal/workloadref"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
)

// Name is the controller's name and the prefix of its --podunavailablebudget-workers flag.
const Name = "podunavailablebudget"

// Reconciler keeps PodUnavailableBudget status and the related-pub annotation of covered pods.
type Reconciler struct {
	client    client.Client
	recorder  record.EventRecorder
	clock     clock.PassiveClock
	workloads pubcheck.Workloads
}

// SetupWithManager registers the PodUnavailableBudget controller. Besides budgets it watches
// pods (a covered pod's availability moves the numbers) and the replicas of the workloads a
// budget may count (CloneSet, Advanced StatefulSet, Deployment, StatefulSet). As in 1.8 it is
// not set up while both budget gates are off: nothing reads the status then, and the webhook
// refuses budgets.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	if !d.Gates.Enabled(features.PodUnavailableBudgetDeleteGate) && !d.Gates.Enabled(features.PodUnavailableBudgetUpdateGate) {
		ctrl.Log.WithName(Name).Info("Not started: PodUnavailableBudgetDeleteGate and PodUnavailableBudgetUpdateGate are both off")
		return nil
	}
	r := &Reconciler{
		client:    mgr.GetClient(),
		recorder:  mgr.GetEventRecorderFor("podunavailablebudget-controller"),
		clock:     d.Clock,
		workloads: pubcheck.Workloads{Client: mgr.GetClient()},
	}
	prologue := kit.Object[*policyv1alpha1.PodUnavailableBudget]{Reader: r.client, Kind: "PodUnavailableBudget", Pass: r.reconcile}
	return kit.Setup(mgr, d, Name, prologue, func(b *kit.Builder) *kit.Builder {
		b = b.For(&policyv1alpha1.PodUnavailableBudget{}).Watches(&corev1.Pod{}, r.podHandler())
		for _, obj := range []client.Object{&appsv1alpha1.CloneSet{}, &appsv1beta1.StatefulSet{}, &appsv1.Deployment{}, &appsv1.StatefulSet{}} {
			b = b.Watches(obj, r.workloadHandler())
		}
		return b
	})
}

// reconcile writes one budget's status.
func (r *Reconciler) reconcile(ctx context.Context, pub *policyv1alpha1.PodUnavailableBudget) (ctrl.Result, error) {
	pods, total, err := r.workloads.PodsFor(ctx, pub)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("find pods: %w", err)
	}
	if err := r.stampRelated(ctx, pub, pods); err != nil {
		return ctrl.Result{}, err
	}
	status, recheck, err := computeStatus(pub, pods, total, r.clock.Now())
	if err != nil {
		r.recorder.Eventf(pub, corev1.EventTypeWarning, "CalculateExpectedPodCountFailed", "Failed to calculate the number of expected pods: %v", err)
		return ctrl.Result{}, fmt.Errorf("desired available: %w", err)
	}
	stale, err := kit.WriteStatus(ctx, r.client, pub, func(pub *policyv1alpha1.PodUnavailableBudget) { pub.Status = status })
	if err != nil || !stale.IsZero() {
		return stale, err
	}
	return kit.After(!recheck.IsZero(), recheck.Sub(r.clock.Now())+100*time.Millisecond), nil
}

// stampRelated sets kruise.io/related-pub on covered pods that lack it, such as pods created
// before the budget, so the pod webhook finds their budget.
func (r *Reconciler) stampRelated(ctx context.Context, pub *policyv1alpha1.PodUnavailableBudget, pods []*corev1.Pod) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{policyv1alpha1.PodRelatedPubAnnotation: pub.Name}}})
	if err != nil {
		return err
	}
	for _, p := range pods {
		if pubcheck.RelatedPub(p) != "" {
			continue
		}
		if err := r.client.Patch(ctx, p.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("annotate pod %s with its budget: %w", p.Name, err)
		}
	}
	return nil
}

// podHandler enqueues the budget a pod's related-pub annotation names, on creation, deletion,
// and any update that may move its availability.
func (r *Reconciler) podHandler() handler.EventHandler {
	enqueue := func(q workqueueAdder, obj client.Object) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pubcheck.RelatedPub(pod) == "" {
			return
		}
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: pod.Namespace, Name: pubcheck.RelatedPub(pod)}})
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueueT) { enqueue(q, e.Object) },
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueueT) { enqueue(q, e.Object) },
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueueT) {
			oldPod, ok1 := e.ObjectOld.(*corev1.Pod)
			newPod, ok2 := e.ObjectNew.(*corev1.Pod)
			if !ok1 || !ok2 {
				return
			}
			if pubcheck.Available(oldPod) != pubcheck.Available(newPod) ||
				(oldPod.DeletionTimestamp == nil) != (newPod.DeletionTimestamp == nil) ||
				pubcheck.RelatedPub(oldPod) != pubcheck.RelatedPub(newPod) {
				enqueue(q, newPod)
			}
		},
	}
}

// workloadHandler enqueues every budget of a workload's namespace when the workload appears,
// goes, starts being deleted or changes its replicas: budgets are few per namespace, and which of them count the
// workload depends on its pods.
func (r *Reconciler) workloadHandler() handler.EventHandler {
	enqueueAll := func(ctx context.Context, q workqueueAdder, obj client.Object) {
		list := &policyv1alpha1.PodUnavailableBudgetList{}
		if err := r.client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "List budgets for a workload", "namespace", obj.GetNamespace())
			return
		}
		for i := range list.Items {
			q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueueT) { enqueueAll(ctx, q, e.Object) },
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueueT) { enqueueAll(ctx, q, e.Object) },
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueueT) {
			oldReplicas, oldSet := workloadref.SpecReplicas(e.ObjectOld)
			newReplicas, newSet := workloadref.SpecReplicas(e.ObjectNew)
			deleting := e.ObjectOld.GetDeletionTimestamp() == nil && e.ObjectNew.GetDeletionTimestamp() != nil
			if oldReplicas != newReplicas || oldSet != newSet || deleting {
				enqueueAll(ctx, q, e.ObjectNew)
			}
		},
	}
}

// workqueueT is the queue the event handlers add to.
type workqueueT = workqueue.TypedRateLimitingInterface[reconcile.Request]

// workqueueAdder is the part of the queue the enqueue helpers use.
type workqueueAdder interface{ Add(reconcile.Request) }
