package nodeimage

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Name is the controller's name, also its key for --<name>-workers.
const Name = "nodeimage"

const (
	// DefaultCreationDelay is how long a Node must have been Ready before its NodeImage is
	// created, so a flapping new node does not get pulls scheduled on it at once.
	DefaultCreationDelay = 30 * time.Second
	// FakeLabel marks a NodeImage that has no Node on purpose (tests); it is not deleted.
	FakeLabel = "apps.kruise.io/fake-nodeimage"
	// minRequeue keeps timer-driven reconciles from spinning.
	minRequeue = time.Second
)

// Options tune the controller.
type Options struct {
	// CreationDelay is how long a Node must have been Ready before its NodeImage is created.
	CreationDelay time.Duration
}

// SetupWithManager registers the NodeImage controller with the default options. It does
// nothing while the KruiseDaemon gate is off.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	return Setup(Options{CreationDelay: DefaultCreationDelay})(mgr, d)
}

// Setup returns a setup.Controller for the NodeImage controller with o.
func Setup(o Options) setup.Controller {
	return func(mgr ctrl.Manager, d setup.Deps) error {
		clk := d.Clock
		r := &Reconciler{client: mgr.GetClient(), recorder: mgr.GetEventRecorderFor("nodeimage-controller"), clock: clk, creationDelay: o.CreationDelay}
		return kit.Setup(mgr, d, Name, r, func(b *kit.Builder) *kit.Builder {
			return b.For(&appsv1alpha1.NodeImage{}).
				Watches(&corev1.Node{}, &handler.EnqueueRequestForObject{}).
				Watches(&appsv1alpha1.ImagePullJob{}, r.jobHandler())
		})
	}
}

// Reconciler keeps one NodeImage per Node and its spec clean.
type Reconciler struct {
	client        client.Client
	recorder      record.EventRecorder
	clock         clock.PassiveClock
	creationDelay time.Duration
}

// Reconcile handles the NodeImage and the Node sharing req's name.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ctx, node, ni, err := kit.NodeAnd[*appsv1alpha1.NodeImage](ctx, r.client, "NodeImage", req)
	if err != nil {
		return ctrl.Result{}, err
	}
	log := ctrl.LoggerFrom(ctx)

	if node == nil || node.DeletionTimestamp != nil {
		if ni == nil || ni.DeletionTimestamp != nil {
			return ctrl.Result{}, nil
		}
		if _, fake := ni.Labels[FakeLabel]; !fake {
			if err := r.client.Delete(ctx, ni); err != nil && !apierrors.IsNotFound(err) {
				return ctrl.Result{}, fmt.Errorf("delete nodeimage: %w", err)
			}
			log.Info("Deleted NodeImage of a gone node")
			return ctrl.Result{}, nil
		}
	}
	if ni == nil {
		return r.create(ctx, node)
	}
	if ni.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}

	now := r.clock.Now()
	spec := ni.DeepCopy()
	ch := cleanSpec(spec, node, r.ownerAlive(ctx), now)
	if ch.modified {
		if err := r.client.Update(ctx, spec); err != nil {
			return ctrl.Result{}, fmt.Errorf("update nodeimage spec: %w", err)
		}
		log.Info("Updated NodeImage spec", "reasons", ch.reasons)
		// The update event brings the next pass, which sees the cleaned spec.
		return ctrl.Result{}, nil
	}

	status, sc := expireStatus(ni, now)
	if len(sc.failed) > 0 {
		if stale, err := kit.WriteStatus(ctx, r.client, ni, func(ni *appsv1alpha1.NodeImage) { ni.Status = status }); err != nil || !stale.IsZero() {
			return stale, err
		}
		for _, image := range sc.failed {
			r.recorder.Eventf(ni, corev1.EventTypeWarning, "PullImageFailed", "Failed to pull image %s on node %s", image, ni.Name)
		}
		log.Info("Marked unanswered tags failed", "tags", sc.failed)
	}
	return ctrl.Result{RequeueAfter: soonest(ch.requeueAfter, sc.requeueAfter)}, nil
}

// create makes the NodeImage of node once it has been Ready for the creation delay.
func (r *Reconciler) create(ctx context.Context, node *corev1.Node) (ctrl.Result, error) {
	ready, since := readySince(node)
	if !ready {
		return ctrl.Result{}, nil
	}
	if wait := r.creationDelay - r.clock.Since(since); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	ni := &appsv1alpha1.NodeImage{ObjectMeta: metav1.ObjectMeta{Name: node.Name, Labels: maps.Clone(node.Labels)}}
	if err := r.client.Create(ctx, ni); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("create nodeimage: %w", err)
	}
	ctrl.LoggerFrom(ctx).Info("Created NodeImage", "Node", klog.KObj(node))
	return ctrl.Result{}, nil
}

// ownerAlive reports whether the ImagePullJob a tag names still exists with the same UID. On a
// read error it keeps the owner: a tag is never dropped on a guess.
func (r *Reconciler) ownerAlive(ctx context.Context) ownerState {
	return func(ref corev1.ObjectReference) bool {
		job := &appsv1alpha1.ImagePullJob{}
		if err := r.client.Get(ctx, jobKey(ref), job); err != nil {
			if apierrors.IsNotFound(err) {
				return false
			}
			ctrl.LoggerFrom(ctx).Error(err, "Checking tag owner", "ImagePullJob", klog.KRef(ref.Namespace, ref.Name))
			return true
		}
		return ref.UID == "" || job.UID == ref.UID
	}
}

// jobHandler enqueues, when an ImagePullJob goes, the NodeImages that hold its tags.
func (r *Reconciler) jobHandler() handler.EventHandler {
	return handler.Funcs{
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			job, ok := e.Object.(*appsv1alpha1.ImagePullJob)
			if !ok {
				return
			}
			list := &appsv1alpha1.NodeImageList{}
			if err := r.client.List(ctx, list); err != nil {
				ctrl.LoggerFrom(ctx).Error(err, "Listing NodeImages for a deleted ImagePullJob")
				return
			}
			for i := range list.Items {
				if ownsTag(&list.Items[i], job.UID) {
					q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}})
				}
			}
		},
	}
}

func ownsTag(ni *appsv1alpha1.NodeImage, uid types.UID) bool {
	for _, img := range ni.Spec.Images {
		for _, tag := range img.Tags {
			for _, ref := range tag.OwnerReferences {
				if ref.UID == uid {
					return true
				}
			}
		}
	}
	return false
}

// readySince reports whether node is Ready and since when.
func readySince(node *corev1.Node) (bool, time.Time) {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue, c.LastTransitionTime.Time
		}
	}
	return false, time.Time{}
}

func soonest(a, b time.Duration) time.Duration {
	d := a
	if d == 0 || (b > 0 && b < d) {
		d = b
	}
	if d > 0 && d < minRequeue {
		d = minRequeue
	}
	return d
}
