package daemonset

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/nodepin"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podowner"
	"github.com/kruise-addon/kruise-addon/controllers/internal/predownload"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Name is the controller's name and the <name> of its --<name>-workers flag.
const Name = "daemonset"

// controllerKind is the GroupVersionKind of DaemonSet, for owner references.
var controllerKind = appsv1alpha1.GroupVersion.WithKind("DaemonSet")

// Reconciler reconciles Advanced DaemonSets.
//
// Its ScaleExp awaits pod creations by node ("node/<name>": the apiserver names the pods) and
// deletions by pod name.
type Reconciler struct {
	podowner.Base
}

// SetupWithManager registers the DaemonSet controller. It watches DaemonSets, their pods and
// revisions, and nodes, whose labels and taints decide where pods go.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	r := newReconciler(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetEventRecorderFor("daemonset-controller"), d)
	return podowner.Setup(mgr, d, Name, podowner.Object(&r.Base, "DaemonSet", r.reconcile), func(b *kit.Builder) *kit.Builder {
		return b.For(&appsv1alpha1.DaemonSet{}).
			Watches(&corev1.Pod{}, r.podHandler()).
			Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(kit.EnqueueAll(r.Client, &appsv1alpha1.DaemonSetList{})), builder.WithPredicates(nodepin.PlacementChanged())).
			Owns(&appsv1.ControllerRevision{})
	})
}

func newReconciler(c client.Client, live client.Reader, rec record.EventRecorder, d setup.Deps) *Reconciler {
	return &Reconciler{Base: podowner.New(c, live, rec, d, revision.ShortHash)}
}

// reconcile moves one DaemonSet, found and not being deleted, towards its spec.
func (r *Reconciler) reconcile(ctx context.Context, ds *appsv1alpha1.DaemonSet) (ctrl.Result, error) {
	pass := kit.PodOwnerPass[*scope, struct{}]{
		Read: func(ctx context.Context) (*scope, error) { return r.readScope(ctx, ds) },
		Pods: func(s *scope) []*corev1.Pod { return s.allPods() },
		Sync: func(ctx context.Context, s *scope) (ctrl.Result, struct{}, error) {
			result, err := r.sync(ctx, s)
			return result, struct{}{}, err
		},
		WriteStatus: func(ctx context.Context, s *scope, _ struct{}, _ error) (ctrl.Result, error) {
			return r.writeStatus(ctx, s)
		},
		Truncate: r.truncateHistory,
	}
	// The DaemonSet's own gate turns its pre-download on (podowner.Run knows only the gate of the
	// replica workloads).
	if predownload.EnabledForDaemonSet(r.Gates) {
		pass.PreDownload = r.preDownload
	}
	return podowner.Run(ctx, &r.Base, ds, pass, nil)
}

// createKey is the expectation key of a pod creation on node.
func createKey(node string) string { return "node/" + node }

// podHandler enqueues a pod's DaemonSet and records what the cache has seen of our own writes;
// a creation is awaited under the node the pod is for, since the apiserver names the pod.
func (r *Reconciler) podHandler() handler.TypedEventHandler[client.Object, reconcile.Request] {
	return r.PodHandler(ownedpods.Handler{Kind: controllerKind, CreateName: createKeyOf})
}

// createKeyOf is the expectation key a created pod is observed under: that of its target node.
func createKeyOf(obj client.Object) string {
	if pod, ok := obj.(*corev1.Pod); ok {
		return createKey(nodepin.TargetNode(pod))
	}
	return createKey("")
}

// event records a Kubernetes event on the DaemonSet.
func (r *Reconciler) event(ds *appsv1alpha1.DaemonSet, typ, reason, format string, args ...any) {
	r.Recorder.Eventf(ds, typ, reason, format, args...)
}
