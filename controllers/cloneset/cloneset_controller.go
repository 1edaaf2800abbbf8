package cloneset

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podowner"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
	"github.com/kruise-addon/kruise-addon/features"
)

// controllerKind is the GroupVersionKind of CloneSet, for owner references.
var controllerKind = appsv1alpha1.GroupVersion.WithKind("CloneSet")

// Reconciler reconciles CloneSets.
type Reconciler struct {
	podowner.Base
	// randomID returns a random instance ID of the given length.
	randomID func(int) string
	// excludePreparingDelete is the manager's --cloneset-scaling-exclude-preparing-delete.
	excludePreparingDelete bool
}

// budgetRequeue is how soon a CloneSet whose update a PodUnavailableBudget held looks again.
const budgetRequeue = time.Second

// Name is the controller's name and the prefix of its --cloneset-workers flag.
const Name = "cloneset"

// SetupWithManager registers the CloneSet controller.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	r := newReconciler(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetEventRecorderFor("cloneset-controller"), d)
	pods := ownedpods.Handler{Kind: controllerKind, EnqueueReleased: true}
	if d.Gates.Enabled(features.CloneSetEventHandlerOptimization) {
		pods.IgnoreUpdate = r.ignoreUpdate
	}
	return podowner.Setup(mgr, d, Name, podowner.Object(&r.Base, "CloneSet", r.reconcile), func(b *kit.Builder) *kit.Builder {
		return b.For(&appsv1alpha1.CloneSet{}).
			// Pod events enqueue the pod's CloneSet and record what the cache has seen of our own writes.
			Watches(&corev1.Pod{}, r.PodHandler(pods)).
			Owns(&corev1.PersistentVolumeClaim{}).
			Owns(&appsv1.ControllerRevision{})
	})
}

func newReconciler(c client.Client, live client.Reader, rec record.EventRecorder, d setup.Deps) *Reconciler {
	r := &Reconciler{randomID: utilrand.String, excludePreparingDelete: d.CloneSetScalingExcludePreparingDelete}
	r.Base = podowner.New(c, live, rec, d, r.revisionLabelValue)
	r.CheckBudgets(d)
	return r
}

// revisionLabelValue is what a pod's controller-revision-hash label holds for a revision.
func (r *Reconciler) revisionLabelValue(name string) string {
	if r.Gates.Enabled(features.CloneSetShortHash) {
		return revision.ShortHash(name)
	}
	return name
}

// reconcile moves one CloneSet, found and not being deleted, towards its spec.
func (r *Reconciler) reconcile(ctx context.Context, cs *appsv1alpha1.CloneSet) (ctrl.Result, error) {
	return podowner.Run(ctx, &r.Base, cs, kit.PodOwnerPass[*scope, outcome]{
		Read: func(ctx context.Context) (*scope, error) { return r.readScope(ctx, cs) },
		Pods: func(s *scope) []*corev1.Pod { return s.pods },
		Sync: r.sync, WriteStatus: r.writeStatus, Truncate: r.truncateHistory,
		ForceForgetOverdue: r.Gates.Enabled(features.ForceDeleteTimeoutExpectationGate),
	}, r.preDownload)
}

// event records a Kubernetes event on the CloneSet.
func (r *Reconciler) event(cs *appsv1alpha1.CloneSet, typ, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(cs, typ, reason, format, args...)
	}
}

// errorf wraps an error with a short context.
func errorf(err error, format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, err)...)
}
