package ephemeraljob

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
	"github.com/kruise-addon/kruise-addon/controllers/internal/slowstart"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Name is the controller's name, also its key for --<name>-workers.
const Name = "ephemeraljob"

// recheck is how soon a pass that waits on the cache runs again, or one that left pods without
// the containers for a later pass.
const recheck = time.Second

// SetupWithManager registers the EphemeralJob controller.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	r := &Reconciler{Tools: kit.ToolsFor(mgr, d, Name), exp: expectations.NewScale(d.Clock)}
	prologue := kit.Object[*appsv1alpha1.EphemeralJob]{Reader: r.Client, Kind: "EphemeralJob", Gone: kit.Forget(r.exp.Forget), Pass: r.reconcile}
	return kit.Setup(mgr, d, Name, prologue, func(b *kit.Builder) *kit.Builder {
		return b.For(&appsv1alpha1.EphemeralJob{}).
			Watches(&corev1.Pod{}, kit.Map(r.jobsOfPod))
	})
}

// Reconciler reconciles EphemeralJobs.
type Reconciler struct {
	kit.Tools
	// exp holds, per job, the pods given containers that the cache does not show with them yet,
	// so that a pass never adds the containers twice or exceeds parallelism.
	exp *expectations.Scale
}

// jobsOfPod enqueues the jobs of the pod's namespace whose selector matches it.
func (r *Reconciler) jobsOfPod(ctx context.Context, obj client.Object) []client.ObjectKey {
	var list appsv1alpha1.EphemeralJobList
	if err := r.Client.List(ctx, &list, client.InNamespace(obj.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "List EphemeralJobs for a pod change")
		return nil
	}
	var out []client.ObjectKey
	for i := range list.Items {
		sel, err := selectorOf(&list.Items[i])
		if err != nil || !sel.Matches(labels.Set(obj.GetLabels())) {
			continue
		}
		out = append(out, client.ObjectKeyFromObject(&list.Items[i]))
	}
	return out
}

// reconcile reads the pods its selector matches, plans the pass, adds the
// containers, and writes the status if it changed.
func (r *Reconciler) reconcile(ctx context.Context, job *appsv1alpha1.EphemeralJob) (ctrl.Result, error) {
	log, key := ctrl.LoggerFrom(ctx), kit.Key(job)
	sel, err := selectorOf(job)
	if err != nil {
		r.Recorder.Eventf(job, corev1.EventTypeWarning, "InvalidSelector", "%v", err)
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	var list corev1.PodList
	if err := r.Client.List(ctx, &list, client.InNamespace(job.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list pods: %w", err)
	}
	pods := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		pods[i] = &list.Items[i]
		if owned, _ := ownContainers(job, pods[i]); owned {
			r.exp.Observe(key, expectations.Create, pods[i].Name)
		}
	}
	if ownedpods.AwaitScale(log, r.exp, key) {
		return ctrl.Result{RequeueAfter: recheck}, nil
	}

	p, err := planPass(planInput{job: job, pods: pods, now: r.Clock.Now()})
	if err != nil {
		return ctrl.Result{}, err
	}
	if p.deleteJob {
		if err := r.Client.Delete(ctx, job); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("delete finished job: %w", err)
		}
		log.Info("Deleted finished job after its ttlSecondsAfterFinished")
		return ctrl.Result{}, nil
	}
	more, injectErr := r.injectAll(ctx, key, job, p.inject)
	stale, err := kit.WriteStatus(ctx, r.Client, job, func(job *appsv1alpha1.EphemeralJob) { job.Status = p.status })
	if err != nil {
		return ctrl.Result{}, err
	}
	if injectErr != nil {
		return ctrl.Result{}, injectErr
	}
	return kit.Sooner(ctrl.Result{RequeueAfter: p.requeueAfter}, kit.After(more, recheck), stale), nil
}

// injectAll adds the job's containers to pods in the shared slow-start batches, at most
// slowstart.MaxPerReconcile pods in one reconcile, stopping when the job changes or goes. more
// says that pods are left for a later reconcile.
func (r *Reconciler) injectAll(ctx context.Context, key string, job *appsv1alpha1.EphemeralJob, pods []*corev1.Pod) (more bool, err error) {
	if len(pods) == 0 {
		return false, nil
	}
	res, err := slowstart.Run(ctx, len(pods), slowstart.Reread(r.Client, "EphemeralJob", job), func(ctx context.Context, from, size int) error {
		errs := make([]error, size)
		ownedpods.Parallel(size, func(i int) { errs[i] = r.inject(ctx, key, job, pods[from+i]) })
		return errors.Join(errs...)
	})
	if res.Stopped != "" {
		ctrl.LoggerFrom(ctx).V(2).Info("Stopped adding ephemeral containers", "reason", res.Stopped, "added", res.Created, "planned", len(pods))
	}
	return res.More, err
}

// inject adds the job's containers to pod through its ephemeralcontainers subresource.
func (r *Reconciler) inject(ctx context.Context, key string, job *appsv1alpha1.EphemeralJob, pod *corev1.Pod) error {
	updated := pod.DeepCopy()
	updated.Spec.EphemeralContainers = withContainers(job, pod)
	r.exp.Expect(key, expectations.Create, pod.Name)
	if err := r.Client.SubResource("ephemeralcontainers").Update(ctx, updated); err != nil {
		r.exp.Observe(key, expectations.Create, pod.Name)
		r.Recorder.Eventf(job, corev1.EventTypeWarning, "FailedCreate", "Add ephemeral containers to pod %s: %v", pod.Name, err)
		return fmt.Errorf("add ephemeral containers to pod %s: %w", pod.Name, err)
	}
	r.Recorder.Eventf(job, corev1.EventTypeNormal, "SuccessfulCreate", "Added ephemeral containers to pod %s", pod.Name)
	ctrl.LoggerFrom(ctx).V(2).Info("Added ephemeral containers", "Pod", klog.KObj(pod))
	return nil
}
