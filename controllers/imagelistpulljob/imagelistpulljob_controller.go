package imagelistpulljob

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Name is the controller's name, also its key for --<name>-workers.
const Name = "imagelistpulljob"

// controllerKind is the GroupVersionKind of ImageListPullJob, for owner references.
var controllerKind = appsv1alpha1.GroupVersion.WithKind("ImageListPullJob")

const (
	expectationTimeout = time.Minute
	recheck            = time.Second
)

// SetupWithManager registers the ImageListPullJob controller. It does nothing unless the
// KruiseDaemon and ImagePullJobGate gates are on.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	r := &Reconciler{Tools: kit.ToolsFor(mgr, d, Name), scale: expectations.NewScale(d.Clock)}
	prologue := kit.Object[*appsv1alpha1.ImageListPullJob]{Reader: r.Client, Kind: "ImageListPullJob", Gone: kit.Forget(r.scale.Forget), Pass: r.reconcile}
	return kit.Setup(mgr, d, Name, prologue, func(b *kit.Builder) *kit.Builder {
		return b.For(&appsv1alpha1.ImageListPullJob{}).
			Owns(&appsv1alpha1.ImagePullJob{})
	})
}

// Reconciler reconciles ImageListPullJobs.
type Reconciler struct {
	kit.Tools
	// scale holds the children we created or deleted and the cache has not shown yet.
	scale *expectations.Scale
}

// reconcile moves one ImageListPullJob, found and not being deleted, along.
func (r *Reconciler) reconcile(ctx context.Context, job *appsv1alpha1.ImageListPullJob) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if job.Status.CompletionTime != nil {
		return r.finished(ctx, job)
	}

	children, all, err := r.children(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	key := kit.Key(job)
	r.observe(key, all)
	if ok, waited := r.scale.Satisfied(key); !ok {
		if waited < expectationTimeout {
			return ctrl.Result{RequeueAfter: recheck}, nil
		}
		log.Info("Gave up waiting for the cache", "pending", r.scale.Pending(key))
		r.scale.Forget(key)
	}

	now := r.Clock.Now()
	status := computeStatus(job, children, now)
	if err := r.apply(ctx, job, planChildren(job, children)); err != nil {
		return ctrl.Result{}, err
	}
	if statusEqual(job.Status, status) {
		return ctrl.Result{}, nil
	}
	return kit.WriteStatus(ctx, r.Client, job, func(job *appsv1alpha1.ImageListPullJob) { job.Status = status })
}

// children lists the ImagePullJobs job controls: the live ones by image, and all by name.
func (r *Reconciler) children(ctx context.Context, job *appsv1alpha1.ImageListPullJob) (map[string]*appsv1alpha1.ImagePullJob, map[string]bool, error) {
	list := &appsv1alpha1.ImagePullJobList{}
	if err := r.Client.List(ctx, list, client.InNamespace(job.Namespace)); err != nil {
		return nil, nil, fmt.Errorf("list imagepulljobs: %w", err)
	}
	byImage := map[string]*appsv1alpha1.ImagePullJob{}
	all := map[string]bool{}
	for i := range list.Items {
		c := &list.Items[i]
		ref := metav1.GetControllerOf(c)
		if ref == nil || ref.UID != job.UID {
			continue
		}
		all[c.Name] = c.DeletionTimestamp == nil
		if c.DeletionTimestamp == nil {
			byImage[c.Spec.Image] = c
		}
	}
	return byImage, all, nil
}

// observe marks as seen the creations the cache shows and the deletions it no longer shows
// (or shows terminating).
func (r *Reconciler) observe(key string, all map[string]bool) {
	pending := r.scale.Pending(key)
	for _, name := range pending[expectations.Create] {
		if _, ok := all[name]; ok {
			r.scale.Observe(key, expectations.Create, name)
		}
	}
	for _, name := range pending[expectations.Delete] {
		if live := all[name]; !live {
			r.scale.Observe(key, expectations.Delete, name)
		}
	}
}

// apply creates and deletes children as planned.
func (r *Reconciler) apply(ctx context.Context, job *appsv1alpha1.ImageListPullJob, p plan) error {
	key := client.ObjectKeyFromObject(job).String()
	var errs []error
	for _, name := range p.remove {
		child := &appsv1alpha1.ImagePullJob{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: name}}
		r.scale.Expect(key, expectations.Delete, name)
		if err := r.Client.Delete(ctx, child, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
			r.scale.Observe(key, expectations.Delete, name)
			errs = append(errs, fmt.Errorf("delete imagepulljob %s: %w", name, err))
		}
	}
	created := 0
	for _, image := range p.create {
		child := newChild(job, image)
		if err := r.Client.Create(ctx, child); err != nil {
			errs = append(errs, fmt.Errorf("create imagepulljob for %s: %w", image, err))
			continue
		}
		r.scale.Expect(key, expectations.Create, child.Name)
		created++
	}
	if created > 0 {
		r.Recorder.Eventf(job, corev1.EventTypeNormal, "SuccessfulCreate", "Created %d ImagePullJobs", created)
	}
	if len(p.remove) > 0 && len(errs) == 0 {
		r.Recorder.Eventf(job, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted %d ImagePullJobs", len(p.remove))
	}
	return errors.Join(errs...)
}

// newChild is the ImagePullJob for one image of job.
func newChild(job *appsv1alpha1.ImageListPullJob, image string) *appsv1alpha1.ImagePullJob {
	return &appsv1alpha1.ImagePullJob{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       job.Namespace,
			GenerateName:    job.Name + "-",
			Labels:          map[string]string{},
			Annotations:     map[string]string{},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, controllerKind)},
		},
		Spec: appsv1alpha1.ImagePullJobSpec{Image: image, ImagePullJobTemplate: *job.Spec.ImagePullJobTemplate.DeepCopy()},
	}
}

// finished deletes a completed job once its TTL has passed.
func (r *Reconciler) finished(ctx context.Context, job *appsv1alpha1.ImageListPullJob) (ctrl.Result, error) {
	return r.DeleteAfterTTL(ctx, "ImageListPullJob", job, job.Spec.CompletionPolicy.TTLSecondsAfterFinished, job.Status.CompletionTime.Time,
		client.PropagationPolicy(metav1.DeletePropagationBackground))
}
