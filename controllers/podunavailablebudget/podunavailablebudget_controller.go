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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	kit.Tools
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
	r := &Reconciler{Tools: kit.ToolsFor(mgr, d, Name), workloads: pubcheck.Workloads{Client: mgr.GetClient()}}
	prologue := kit.Object[*policyv1alpha1.PodUnavailableBudget]{Reader: r.Client, Kind: "PodUnavailableBudget", Pass: r.reconcile}
	return kit.Setup(mgr, d, Name, prologue, func(b *kit.Builder) *kit.Builder {
		b = b.For(&policyv1alpha1.PodUnavailableBudget{}).Watches(&corev1.Pod{}, podEvents().Handler())
		for _, obj := range []client.Object{&appsv1alpha1.CloneSet{}, &appsv1beta1.StatefulSet{}, &appsv1.Deployment{}, &appsv1.StatefulSet{}} {
			b = b.Watches(obj, r.workloadEvents().Handler())
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
	status, recheck, err := computeStatus(pub, pods, total, r.Clock.Now())
	if err != nil {
		r.Recorder.Eventf(pub, corev1.EventTypeWarning, "CalculateExpectedPodCountFailed", "Failed to calculate the number of expected pods: %v", err)
		return ctrl.Result{}, fmt.Errorf("desired available: %w", err)
	}
	stale, err := kit.WriteStatus(ctx, r.Client, pub, func(pub *policyv1alpha1.PodUnavailableBudget) { pub.Status = status })
	if err != nil || !stale.IsZero() {
		return stale, err
	}
	return kit.After(!recheck.IsZero(), recheck.Sub(r.Clock.Now())+100*time.Millisecond), nil
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
		if err := r.Client.Patch(ctx, p.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("annotate pod %s with its budget: %w", p.Name, err)
		}
	}
	return nil
}

// podEvents enqueues the budget a pod's related-pub annotation names, on creation, deletion,
// and any update that may move its availability.
func podEvents() kit.Events {
	budget := func(_ context.Context, obj client.Object) []client.ObjectKey {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pubcheck.RelatedPub(pod) == "" {
			return nil
		}
		return []client.ObjectKey{{Namespace: pod.Namespace, Name: pubcheck.RelatedPub(pod)}}
	}
	return kit.Events{
		Create: budget,
		Delete: budget,
		Update: func(ctx context.Context, old, cur client.Object) []client.ObjectKey {
			oldPod, ok1 := old.(*corev1.Pod)
			newPod, ok2 := cur.(*corev1.Pod)
			if !ok1 || !ok2 {
				return nil
			}
			if pubcheck.Available(oldPod) != pubcheck.Available(newPod) ||
				(oldPod.DeletionTimestamp == nil) != (newPod.DeletionTimestamp == nil) ||
				pubcheck.RelatedPub(oldPod) != pubcheck.RelatedPub(newPod) {
				return budget(ctx, newPod)
			}
			return nil
		},
	}
}

// workloadEvents enqueues every budget of a workload's namespace when the workload appears,
// goes, starts being deleted or changes its replicas: budgets are few per namespace, and which of them count the
// workload depends on its pods.
func (r *Reconciler) workloadEvents() kit.Events {
	all := func(ctx context.Context, obj client.Object) []client.ObjectKey {
		list := &policyv1alpha1.PodUnavailableBudgetList{}
		if err := r.Client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "List budgets for a workload", "namespace", obj.GetNamespace())
			return nil
		}
		return kit.ListKeys(list)
	}
	return kit.Events{
		Create: all,
		Delete: all,
		Update: func(ctx context.Context, old, cur client.Object) []client.ObjectKey {
			oldReplicas, oldSet := workloadref.SpecReplicas(old)
			newReplicas, newSet := workloadref.SpecReplicas(cur)
			deleting := old.GetDeletionTimestamp() == nil && cur.GetDeletionTimestamp() != nil
			if oldReplicas != newReplicas || oldSet != newSet || deleting {
				return all(ctx, cur)
			}
			return nil
		},
	}
}
