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
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
		r := &Reconciler{Tools: kit.ToolsFor(mgr, d, Name), creationDelay: o.CreationDelay}
		return kit.Setup(mgr, d, Name, r, func(b *kit.Builder) *kit.Builder {
			return b.For(&appsv1alpha1.NodeImage{}).
				Watches(&corev1.Node{}, kit.SameKey()).
				Watches(&appsv1alpha1.ImagePullJob{}, r.jobEvents().Handler())
		})
	}
}

// Reconciler keeps one NodeImage per Node and its spec clean.
type Reconciler struct {
	kit.Tools
	creationDelay time.Duration
}

// Reconcile handles the NodeImage and the Node sharing req's name.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ctx, node, ni, err := kit.NodeAnd[*appsv1alpha1.NodeImage](ctx, r.Client, "NodeImage", req)
	if err != nil {
		return ctrl.Result{}, err
	}
	log := ctrl.LoggerFrom(ctx)

	if node == nil || node.DeletionTimestamp != nil {
		if ni == nil {
			return ctrl.Result{}, nil
		}
		if _, fake := ni.Labels[FakeLabel]; !fake || ni.DeletionTimestamp != nil {
			return ctrl.Result{}, kit.DeleteOfGoneNode(ctx, r.Client, "NodeImage", ni)
		}
	}
	if ni == nil {
		return r.create(ctx, node)
	}
	if ni.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}

	now := r.Clock.Now()
	spec := ni.DeepCopy()
	ch := cleanSpec(spec, node, r.ownerAlive(ctx), now)
	if ch.modified {
		if err := r.Client.Update(ctx, spec); err != nil {
			return ctrl.Result{}, fmt.Errorf("update nodeimage spec: %w", err)
		}
		log.Info("Updated NodeImage spec", "reasons", ch.reasons)
		// The update event brings the next pass, which sees the cleaned spec.
		return ctrl.Result{}, nil
	}

	status, sc := expireStatus(ni, now)
	if len(sc.failed) > 0 {
		if stale, err := kit.WriteStatus(ctx, r.Client, ni, func(ni *appsv1alpha1.NodeImage) { ni.Status = status }); err != nil || !stale.IsZero() {
			return stale, err
		}
		for _, image := range sc.failed {
			r.Recorder.Eventf(ni, corev1.EventTypeWarning, "PullImageFailed", "Failed to pull image %s on node %s", image, ni.Name)
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
	if wait := r.creationDelay - r.Clock.Since(since); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	ni := &appsv1alpha1.NodeImage{ObjectMeta: metav1.ObjectMeta{Name: node.Name, Labels: maps.Clone(node.Labels)}}
	if err := r.Client.Create(ctx, ni); err != nil {
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
		if err := r.Client.Get(ctx, jobKey(ref), job); err != nil {
			if apierrors.IsNotFound(err) {
				return false
			}
			ctrl.LoggerFrom(ctx).Error(err, "Checking tag owner", "ImagePullJob", klog.KRef(ref.Namespace, ref.Name))
			return true
		}
		return ref.UID == "" || job.UID == ref.UID
	}
}

// jobEvents enqueues, when an ImagePullJob goes, the NodeImages that hold its tags.
func (r *Reconciler) jobEvents() kit.Events {
	return kit.Events{Delete: func(ctx context.Context, obj client.Object) []client.ObjectKey {
		job, ok := obj.(*appsv1alpha1.ImagePullJob)
		if !ok {
			return nil
		}
		list := &appsv1alpha1.NodeImageList{}
		if err := r.Client.List(ctx, list); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing NodeImages for a deleted ImagePullJob")
			return nil
		}
		var keys []client.ObjectKey
		for i := range list.Items {
			if ownsTag(&list.Items[i], job.UID) {
				keys = append(keys, client.ObjectKey{Name: list.Items[i].Name})
			}
		}
		return keys
	}}
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
