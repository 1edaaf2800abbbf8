package imagepulljob

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/kruise-addon/kruise-addon/apis/kinds"

	"github.com/kruise-addon/kruise-addon/controllers/internal/rollout"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Name is the controller's name, also its key for --<name>-workers.
const Name = "imagepulljob"

// ProtectionFinalizer holds a job until its secret copies are released.
const ProtectionFinalizer = kinds.ImagePullJobFinalizer

// controllerKind is the GroupVersionKind of ImagePullJob, for tag owner references.
var controllerKind = appsv1alpha1.GroupVersion.WithKind("ImagePullJob")

const (
	// expectationTimeout is how long a reconcile waits for the cache to see its own writes.
	expectationTimeout = time.Minute
	// recheck is how soon a reconcile that waits on the cache runs again.
	recheck = time.Second
)

// SetupWithManager registers the ImagePullJob controller. It does nothing unless the
// KruiseDaemon and ImagePullJobGate gates are on.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	r := &Reconciler{
		Tools:   kit.ToolsFor(mgr, d, Name),
		live:    mgr.GetAPIReader(),
		secrets: secretSyncer{client: mgr.GetClient(), reader: mgr.GetAPIReader(), namespace: d.DaemonConfigNamespace},
		rv:      expectations.NewResourceVersion(d.Clock),
	}
	prologue := kit.Object[*appsv1alpha1.ImagePullJob]{Reader: r.Client, Kind: "ImagePullJob", Deleting: r.deleting, Pass: r.reconcile}
	return kit.Setup(mgr, d, Name, prologue, func(b *kit.Builder) *kit.Builder {
		return b.For(&appsv1alpha1.ImagePullJob{}).
			Watches(&appsv1alpha1.NodeImage{}, r.nodeImageEvents().Handler()).
			Watches(&corev1.Pod{}, r.podEvents().Handler())
	})
}

// Reconciler reconciles ImagePullJobs.
type Reconciler struct {
	kit.Tools
	// live reads NodeImages past the cache when a tag write conflicts.
	live    client.Reader
	secrets secretSyncer
	// rv holds the resourceVersions of our own job status and NodeImage writes, so a pass
	// never counts a stale NodeImage as not synced and exceeds the parallelism.
	rv *expectations.ResourceVersion
}

// deleting forgets the writes expected of a job being deleted and releases what it holds.
func (r *Reconciler) deleting(ctx context.Context, job *appsv1alpha1.ImagePullJob) (ctrl.Result, error) {
	r.rv.Forget(job.UID)
	return ctrl.Result{}, r.finalize(ctx, job)
}

// reconcile moves one ImagePullJob, found and not being deleted, along.
func (r *Reconciler) reconcile(ctx context.Context, job *appsv1alpha1.ImagePullJob) (ctrl.Result, error) {
	if ok, _ := r.satisfied(job); !ok {
		return ctrl.Result{RequeueAfter: recheck}, nil
	}
	if job.Status.CompletionTime != nil {
		return r.finished(ctx, job)
	}
	if !controllerutil.ContainsFinalizer(job, ProtectionFinalizer) {
		controllerutil.AddFinalizer(job, ProtectionFinalizer)
		if err := r.Client.Update(ctx, job); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer: %w", err)
		}
		r.rv.Expect(job)
		return ctrl.Result{}, nil
	}

	s, err := r.readScope(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, ni := range s.nodeImages {
		if ok, _ := r.satisfied(ni); !ok {
			return ctrl.Result{RequeueAfter: recheck}, nil
		}
	}
	secrets, err := r.secrets.sync(ctx, job)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("sync pull secrets: %w", err)
	}

	now := r.Clock.Now()
	p := nodeProgress(job, s.image, s.tag, s.nodeImages, secrets)
	status := computeStatus(job, len(s.nodeImages), p, now)
	if status.CompletionTime == nil {
		for _, name := range syncWindow(job.Spec.Parallelism, len(s.nodeImages), len(p.pulling), p.notSynced) {
			if err := r.writeTag(ctx, name, job, s, secrets, now); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	if !statusEqual(job.Status, status) {
		if stale, err := kit.WriteStatus(ctx, r.Client, job, func(job *appsv1alpha1.ImagePullJob) { job.Status = status }); err != nil || !stale.IsZero() {
			return stale, err
		}
		r.rv.Expect(job)
		if status.CompletionTime != nil {
			r.Recorder.Eventf(job, corev1.EventTypeNormal, "Completed", "%s: %d succeeded, %d failed", status.Message, status.Succeeded, status.Failed)
		}
	}
	var requeue rollout.Requeue
	requeue.After(deadlineLeft(job, now))
	requeue.After(r.secrets.recheck(job))
	return ctrl.Result{RequeueAfter: time.Duration(requeue)}, nil
}

// scope is what one pass reads.
type scope struct {
	image, tag string
	nodeImages []*appsv1alpha1.NodeImage
}

func (r *Reconciler) readScope(ctx context.Context, job *appsv1alpha1.ImagePullJob) (scope, error) {
	image, tag, err := SplitImage(job.Spec.Image)
	if err != nil {
		return scope{}, err
	}
	all := &appsv1alpha1.NodeImageList{}
	if err := r.Client.List(ctx, all); err != nil {
		return scope{}, fmt.Errorf("list nodeimages: %w", err)
	}
	var pods []corev1.Pod
	if job.Spec.PodSelector != nil {
		list := &corev1.PodList{}
		if err := r.Client.List(ctx, list, client.InNamespace(job.Namespace)); err != nil {
			return scope{}, fmt.Errorf("list pods: %w", err)
		}
		pods = list.Items
	}
	nis, err := selectNodeImages(job, all.Items, pods)
	if err != nil {
		return scope{}, err
	}
	return scope{image: image, tag: tag, nodeImages: nis}, nil
}

// writeTag adds the job's tag to the NodeImage called name, re-reading it on conflict.
func (r *Reconciler) writeTag(ctx context.Context, name string, job *appsv1alpha1.ImagePullJob, s scope, secrets []appsv1alpha1.ReferenceObject, now time.Time) error {
	var reader client.Reader = r.Client
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		ni := &appsv1alpha1.NodeImage{}
		if err := reader.Get(ctx, types.NamespacedName{Name: name}, ni); err != nil {
			return err
		}
		// A conflict means the cache is behind (the daemon writes status all the time): the
		// next try reads the NodeImage as it is.
		reader = r.live
		if !addTag(ni, job, s.image, s.tag, secrets, now) {
			return nil
		}
		if err := r.Client.Update(ctx, ni); err != nil {
			return err
		}
		r.rv.Expect(ni)
		return nil
	})
	if err != nil {
		return fmt.Errorf("write tag into nodeimage %s: %w", name, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Wrote tag into NodeImage", "NodeImage", klog.KRef("", name), "image", job.Spec.Image)
	return nil
}

// finished releases a completed job's secrets and deletes it once its TTL has passed.
func (r *Reconciler) finished(ctx context.Context, job *appsv1alpha1.ImagePullJob) (ctrl.Result, error) {
	if err := r.finalize(ctx, job); err != nil {
		return ctrl.Result{}, err
	}
	return r.DeleteAfterTTL(ctx, "ImagePullJob", job, job.Spec.CompletionPolicy.TTLSecondsAfterFinished, job.Status.CompletionTime.Time)
}

// finalize releases the job's secret copies and removes its finalizer.
func (r *Reconciler) finalize(ctx context.Context, job *appsv1alpha1.ImagePullJob) error {
	if !controllerutil.ContainsFinalizer(job, ProtectionFinalizer) {
		return nil
	}
	if err := r.secrets.releaseAll(ctx, job); err != nil {
		return fmt.Errorf("release pull secrets: %w", err)
	}
	controllerutil.RemoveFinalizer(job, ProtectionFinalizer)
	if err := r.Client.Update(ctx, job); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("remove finalizer: %w", err)
	}
	if job.DeletionTimestamp == nil {
		r.rv.Expect(job)
	}
	return nil
}

// satisfied observes obj's cached copy and says whether it holds our last write; after
// expectationTimeout it stops waiting.
func (r *Reconciler) satisfied(obj expectations.Object) (bool, time.Duration) {
	r.rv.Observe(obj)
	ok, waited := r.rv.Satisfied(obj)
	if !ok && waited >= expectationTimeout {
		r.rv.Forget(obj.GetUID())
		return true, waited
	}
	return ok, waited
}

// deadlineLeft is when an Always job's activeDeadlineSeconds passes; zero without one.
func deadlineLeft(job *appsv1alpha1.ImagePullJob, now time.Time) time.Duration {
	cp := job.Spec.CompletionPolicy
	if cp.Type == appsv1alpha1.Never || cp.ActiveDeadlineSeconds == nil || job.Status.StartTime == nil || job.Status.CompletionTime != nil {
		return 0
	}
	left := time.Duration(*cp.ActiveDeadlineSeconds)*time.Second - now.Sub(job.Status.StartTime.Time)
	if left < recheck {
		left = recheck
	}
	return left
}

// labelsChanged reports whether a NodeImage update moved it in or out of label selectors.
func labelsChanged(a, b map[string]string) bool { return !maps.Equal(a, b) }
