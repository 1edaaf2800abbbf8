package advancedcronjob

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Name is the controller's name, also its key for --<name>-workers.
const Name = "advancedcronjob"

// SetupWithManager registers the AdvancedCronJob controller.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	workers := d.Workers(Name)
	clk := d.Clock
	r := &Reconciler{
		Client:   mgr.GetClient(),
		Scheme:   mgr.GetScheme(),
		Recorder: mgr.GetEventRecorderFor("advancedcronjob-controller"),
		Clock:    clk,
		wake:     newWakeups(clk),
	}
	if err := mgr.Add(r.wake); err != nil {
		return fmt.Errorf("set up %s wake-ups: %w", Name, err)
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		For(&appsv1alpha1.AdvancedCronJob{}).
		Owns(&batchv1.Job{}).
		Owns(&appsv1alpha1.BroadcastJob{}).
		Owns(&appsv1alpha1.ImageListPullJob{}).
		WatchesRawSource(source.Channel(r.wake.events, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up %s controller: %w", Name, err)
	}
	return nil
}

// Reconciler reconciles AdvancedCronJobs.
type Reconciler struct {
	Client   client.Client
	Scheme   *runtime.Scheme
	Recorder record.EventRecorder
	Clock    clock.Clock
	wake     *wakeups
}

// Reconcile reads the AdvancedCronJob and its children, prunes the history, starts a due
// run, writes the status if it changed, and sets a wake-up for the next run.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	acj := &appsv1alpha1.AdvancedCronJob{}
	if err := r.Client.Get(ctx, req.NamespacedName, acj); err != nil {
		if apierrors.IsNotFound(err) {
			r.wake.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	log := ctrl.LoggerFrom(ctx).WithValues("advancedCronJob", klog.KObj(acj))
	ctx = ctrl.LoggerInto(ctx, log)
	if acj.DeletionTimestamp != nil {
		r.wake.forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}

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
		r.event(acj, corev1.EventTypeWarning, "TooManyMissedRuns", "%s", err)
		log.Error(err, "Cannot work out the next run")
		return ctrl.Result{}, nil
	}

	created, err := r.apply(ctx, acj, p)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.writeStatus(ctx, acj, computeStatus(acj, children, created, p)); err != nil {
		return ctrl.Result{}, err
	}
	if p.next.IsZero() {
		r.wake.forget(req.NamespacedName)
	} else {
		r.wake.at(req.NamespacedName, p.next.Sub(r.Clock.Now()))
		log.V(4).Info("Waiting for the next run", "next", p.next)
	}
	return ctrl.Result{}, nil
}

// apply prunes, replaces and creates as planned; it returns the job created, if any.
func (r *Reconciler) apply(ctx context.Context, acj *appsv1alpha1.AdvancedCronJob, p runPlan) (client.Object, error) {
	log := ctrl.LoggerFrom(ctx)
	bg := client.PropagationPolicy(metav1.DeletePropagationBackground)
	for _, o := range p.prune {
		// Best effort, as in 1.8: a failed prune is retried at the next reconcile.
		if err := r.Client.Delete(ctx, o, bg); client.IgnoreNotFound(err) != nil {
			log.Error(err, "Prune finished job", "job", klog.KObj(o))
			continue
		}
		log.V(2).Info("Pruned finished job beyond the history limit", "job", klog.KObj(o))
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
	log.Info("Started a run", "job", klog.KObj(obj), "scheduledAt", p.run)
	return obj, nil
}

func (r *Reconciler) writeStatus(ctx context.Context, acj *appsv1alpha1.AdvancedCronJob, st appsv1alpha1.AdvancedCronJobStatus) error {
	if apiequality.Semantic.DeepEqual(acj.Status, st) {
		return nil
	}
	orig := acj.DeepCopy()
	acj.Status = st
	if err := r.Client.Status().Patch(ctx, acj, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	return nil
}

func (r *Reconciler) event(acj *appsv1alpha1.AdvancedCronJob, typ, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(acj, typ, reason, format, args...)
	}
}
