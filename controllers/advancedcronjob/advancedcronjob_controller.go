package advancedcronjob

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Name is the controller's name, also its key for --<name>-workers.
const Name = "advancedcronjob"

// SetupWithManager registers the AdvancedCronJob controller.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	r := &Reconciler{Tools: kit.ToolsFor(mgr, d, Name), Scheme: mgr.GetScheme(), wake: newWakeups(d.Clock)}
	if err := mgr.Add(r.wake); err != nil {
		return fmt.Errorf("set up %s wake-ups: %w", Name, err)
	}
	forget := func(req ctrl.Request) { r.wake.forget(req.NamespacedName) }
	prologue := kit.Object[*appsv1alpha1.AdvancedCronJob]{Reader: r.Client, Kind: "AdvancedCronJob", Gone: forget, Deleting: r.deleting, Pass: r.reconcile}
	return kit.Setup(mgr, d, Name, prologue, func(b *kit.Builder) *kit.Builder {
		return b.For(&appsv1alpha1.AdvancedCronJob{}).
			Owns(&batchv1.Job{}).
			Owns(&appsv1alpha1.BroadcastJob{}).
			Owns(&appsv1alpha1.ImageListPullJob{}).
			WatchesRawSource(source.Channel(r.wake.events, &handler.EnqueueRequestForObject{}))
	})
}

// Reconciler reconciles AdvancedCronJobs.
type Reconciler struct {
	kit.Tools
	Scheme *runtime.Scheme
	wake   *wakeups
}

// deleting drops the wake-up of an AdvancedCronJob being deleted.
func (r *Reconciler) deleting(_ context.Context, acj *appsv1alpha1.AdvancedCronJob) (ctrl.Result, error) {
	r.wake.forget(client.ObjectKeyFromObject(acj))
	return ctrl.Result{}, nil
}

// reconcile reads the AdvancedCronJob's children, prunes the history, starts a due run, writes
// the status if it changed, and sets a wake-up for the next run.
func (r *Reconciler) reconcile(ctx context.Context, acj *appsv1alpha1.AdvancedCronJob) (ctrl.Result, error) {
	log, key := ctrl.LoggerFrom(ctx), client.ObjectKeyFromObject(acj)

	children, err := listChildren(ctx, r.Client, acj)
	if err != nil {
		return ctrl.Result{}, err
	}
	paused := acj.Spec.Paused != nil && *acj.Spec.Paused
	var p runPlan
	if paused {
		p, err = planRun(acj, children, nil, r.Clock.Now())
	} else {
		s, perr := parseSchedule(acj)
		if perr != nil {
			// Retrying cannot fix the spec; the template and schedule are fixed by an edit,
			// which triggers a reconcile.
			r.event(acj, corev1.EventTypeWarning, "InvalidSchedule", "%s", perr)
			log.Error(perr, "Invalid schedule")
			p, err = planRun(acj, children, nil, r.Clock.Now())
		} else {
			p, err = planRun(acj, children, s, r.Clock.Now())
		}
	}
	if err != nil {
		// Only too many missed runs get here (the message names the count and the fix). As in
		// 1.8 no status field records it and no retry can fix it: an edit of the spec, which
		// triggers a reconcile, does. The Warning event says so where 1.8 only logs.
		r.event(acj, corev1.EventTypeWarning, "TooManyMissedRuns", "%s", err)
		log.Error(err, "Cannot work out the next run")
		return ctrl.Result{}, nil
	}

	created, err := r.apply(ctx, acj, p)
	if err != nil {
		return ctrl.Result{}, err
	}
	st := computeStatus(acj, children, created, p)
	stale, err := kit.WriteStatus(ctx, r.Client, acj, func(acj *appsv1alpha1.AdvancedCronJob) { acj.Status = st })
	if err != nil {
		return ctrl.Result{}, err
	}
	if p.next.IsZero() {
		r.wake.forget(key)
	} else {
		r.wake.at(key, p.next.Sub(r.Clock.Now()))
		log.V(4).Info("Waiting for the next run", "next", p.next)
	}
	return stale, nil
}

// apply prunes, replaces and creates as planned; it returns the job created, if any.
func (r *Reconciler) apply(ctx context.Context, acj *appsv1alpha1.AdvancedCronJob, p runPlan) (client.Object, error) {
	log := ctrl.LoggerFrom(ctx)
	bg := client.PropagationPolicy(metav1.DeletePropagationBackground)
	for _, o := range p.prune {
		// Best effort, as in 1.8: a failed prune is retried at the next reconcile.
		if err := r.Client.Delete(ctx, o, bg); client.IgnoreNotFound(err) != nil {
			log.Error(err, "Prune finished job", string(templateKind(acj)), klog.KObj(o))
			continue
		}
		log.V(2).Info("Pruned finished job beyond the history limit", string(templateKind(acj)), klog.KObj(o))
	}
	for _, o := range p.replace {
		if err := r.Client.Delete(ctx, o, bg); client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("replace active job %s: %w", o.GetName(), err)
		}
		r.event(acj, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted active job %s to replace it", o.GetName())
	}
	if p.skip != "" {
		log.V(2).Info("Not starting a due run", "reason", p.skip)
	}
	if p.run == nil {
		return nil, nil
	}
	obj, err := buildChild(acj, *p.run, r.Scheme)
	if err != nil {
		r.event(acj, corev1.EventTypeWarning, "InvalidTemplate", "%s", err)
		return nil, nil
	}
	if err := r.Client.Create(ctx, obj); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return obj, nil
		}
		r.event(acj, corev1.EventTypeWarning, "FailedCreate", "Create %s: %v", obj.GetName(), err)
		return nil, fmt.Errorf("create %s for run %s: %w", obj.GetName(), p.run, err)
	}
	r.event(acj, corev1.EventTypeNormal, "SuccessfulCreate", "Created %s %s", templateKind(acj), obj.GetName())
	log.Info("Started a run", string(templateKind(acj)), klog.KObj(obj), "scheduledAt", p.run)
	return obj, nil
}

func (r *Reconciler) event(acj *appsv1alpha1.AdvancedCronJob, typ, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(acj, typ, reason, format, args...)
	}
}
