package containerrecreaterequest

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podcondition"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Name is the controller's name, also its key for --<name>-workers.
const Name = "containerrecreaterequest"

// SetupWithManager registers the ContainerRecreateRequest controller. Like 1.8 it runs only
// while KruiseDaemon is on: without the daemon nobody recreates containers.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	r := &Reconciler{Tools: kit.Tools{Client: mgr.GetClient(), Clock: d.Clock}, Reader: mgr.GetAPIReader()}
	prologue := kit.Object[*appsv1alpha1.ContainerRecreateRequest]{Reader: r.Client, Kind: "ContainerRecreateRequest", KeepDeleting: true, Pass: r.reconcile}
	return kit.Setup(mgr, d, Name, prologue, func(b *kit.Builder) *kit.Builder {
		return b.For(&appsv1alpha1.ContainerRecreateRequest{}).
			Watches(&corev1.Pod{}, podEvents(mgr.GetClient()).Handler())
	})
}

// Reconciler reconciles ContainerRecreateRequests.
type Reconciler struct {
	// Tools' Client and Clock (it records no events).
	kit.Tools
	// Reader reads the apiserver itself when a pod condition write conflicted; nil reads
	// through Client.
	Reader client.Reader
}

// reconcile gets the request's pod, decides, and applies the plan; a request being deleted
// too, so that its hold on the pod is released.
func (r *Reconciler) reconcile(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest) (ctrl.Result, error) {
	var pod *corev1.Pod
	got := &corev1.Pod{}
	switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: crr.Namespace, Name: crr.Spec.PodName}, got); {
	case err == nil:
		pod = got
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, fmt.Errorf("get pod %s/%s: %w", crr.Namespace, crr.Spec.PodName, err)
	}

	p := decide(crr, pod, r.Clock.Now())
	if stale, err := r.apply(ctx, crr, pod, p); err != nil || !stale.IsZero() {
		return stale, err
	}
	return ctrl.Result{RequeueAfter: p.requeueAfter}, nil
}

// apply does the plan's writes, in the order that keeps a crash safe: the finalizer goes on
// before the pod is marked not-ready and comes off only after it is ready again.
func (r *Reconciler) apply(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest, pod *corev1.Pod, p plan) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	now := metav1.NewTime(r.Clock.Now())
	key := podcondition.Holder{UserAgent: userAgent, Key: crr.Namespace + "/" + crr.Name}

	if p.release {
		if pod != nil && pod.DeletionTimestamp == nil {
			if err := r.setNotReady(ctx, pod, key, false, now); err != nil {
				return ctrl.Result{}, err
			}
		}
		if err := r.patchFinalizer(ctx, crr, false); err != nil {
			return ctrl.Result{}, err
		}
		log.V(3).Info("Released the pod's not-ready hold")
	}
	if p.dropActiveLabel {
		if err := kit.PatchLabel(ctx, r.Client, crr, appsv1alpha1.ContainerRecreateRequestActiveKey, nil); err != nil {
			return ctrl.Result{}, fmt.Errorf("drop active label: %w", err)
		}
	}
	if p.delete {
		if err := r.Client.Delete(ctx, crr, client.Preconditions{UID: &crr.UID}); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("delete after ttlSecondsAfterFinished: %w", err)
		}
		log.Info("Deleted the request, ttlSecondsAfterFinished passed")
		return ctrl.Result{}, nil
	}
	if p.complete {
		return r.complete(ctx, crr, p, now)
	}
	if p.phase != "" {
		if stale, err := kit.WriteStatus(ctx, r.Client, crr, func(crr *appsv1alpha1.ContainerRecreateRequest) { crr.Status.Phase = p.phase }); err != nil || !stale.IsZero() {
			return stale, err
		}
	}
	if p.syncStatuses != nil {
		if err := kit.PatchAnnotation(ctx, r.Client, crr, appsv1alpha1.ContainerRecreateRequestSyncContainerStatusesKey, p.syncStatuses); err != nil {
			return ctrl.Result{}, fmt.Errorf("sync container statuses: %w", err)
		}
	}
	if p.acquire {
		if podcondition.HasGate(pod, appspub.KruisePodReadyConditionType) {
			if err := r.patchFinalizer(ctx, crr, true); err != nil {
				return ctrl.Result{}, err
			}
			if err := r.setNotReady(ctx, pod, key, true, now); err != nil {
				return ctrl.Result{}, err
			}
		} else {
			log.Info("Cannot hold the pod not-ready: it has no KruisePodReady readiness gate", "Pod", klog.KObj(pod))
		}
		if err := kit.PatchAnnotation(ctx, r.Client, crr, appsv1alpha1.ContainerRecreateRequestUnreadyAcquiredKey, ptr.To(now.UTC().Format(time.RFC3339))); err != nil {
			return ctrl.Result{}, fmt.Errorf("record unready acquired: %w", err)
		}
		log.V(3).Info("Holding the pod not-ready", "unreadyGracePeriodSeconds", *crr.Spec.Strategy.UnreadyGracePeriodSeconds)
	}
	return ctrl.Result{}, nil
}

// complete writes phase Completed, the completion time and the message, with the resource
// version, so that a daemon write in between is not lost.
func (r *Reconciler) complete(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest, p plan, now metav1.Time) (ctrl.Result, error) {
	stale, err := kit.WriteStatus(ctx, r.Client, crr.DeepCopy(), func(crr *appsv1alpha1.ContainerRecreateRequest) {
		crr.Status.Phase = appsv1alpha1.ContainerRecreateRequestCompleted
		crr.Status.CompletionTime = &now
		crr.Status.Message = p.completeMessage
	})
	if err != nil || !stale.IsZero() {
		return stale, err
	}
	ctrl.LoggerFrom(ctx).Info("Completed the request", "message", p.completeMessage)
	return ctrl.Result{}, nil
}

func (r *Reconciler) patchFinalizer(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest, add bool) error {
	const f = appsv1alpha1.ContainerRecreateRequestUnreadyAcquiredKey
	has := slices.Contains(crr.Finalizers, f)
	if has == add {
		return nil
	}
	orig := crr.DeepCopy()
	if add {
		crr.Finalizers = append(crr.Finalizers, f)
	} else {
		crr.Finalizers = slices.DeleteFunc(crr.Finalizers, func(s string) bool { return s == f })
	}
	if err := r.Client.Patch(ctx, crr, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("update finalizer %s: %w", f, err)
	}
	return nil
}

// setNotReady adds or removes this request's hold on the pod's KruisePodReady condition. The
// patch carries the pod's resourceVersion; a conflict with the kubelet or another holder is
// retried at once on the pod read again.
func (r *Reconciler) setNotReady(ctx context.Context, pod *corev1.Pod, key podcondition.Holder, add bool, now metav1.Time) error {
	if !podcondition.HasGate(pod, appspub.KruisePodReadyConditionType) {
		return nil
	}
	_, err := podcondition.Patch(ctx, r.Client, r.Reader, pod, func(cur *corev1.Pod) bool {
		if add {
			return podcondition.Hold(cur, key, now)
		}
		return podcondition.Release(cur, key, now)
	})
	if err != nil {
		return fmt.Errorf("set pod %s not-ready=%t: %w", klog.KObj(pod), add, err)
	}
	return nil
}

// podEvents enqueues the active requests of a pod whose status changed.
func podEvents(c client.Reader) kit.Events {
	requests := func(ctx context.Context, pod client.Object) []client.ObjectKey {
		list := &appsv1alpha1.ContainerRecreateRequestList{}
		if err := c.List(ctx, list, client.InNamespace(pod.GetNamespace()),
			client.MatchingLabels{appsv1alpha1.ContainerRecreateRequestPodNameKey: pod.GetName()}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "List requests of pod", "pod", klog.KObj(pod))
			return nil
		}
		return kit.ListKeys(list)
	}
	return kit.Events{
		Update: func(ctx context.Context, _, cur client.Object) []client.ObjectKey { return requests(ctx, cur) },
		Delete: requests,
	}
}
