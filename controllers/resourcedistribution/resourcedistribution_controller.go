package resourcedistribution

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// Name is the controller's name, also its key for --resourcedistribution-workers.
const Name = "resourcedistribution"

// SetupWithManager registers the ResourceDistribution controller with mgr.
func SetupWithManager(mgr ctrl.Manager, d setup.Deps) error {
	r := &Reconciler{Tools: kit.ToolsFor(mgr, d, Name), Copies: mgr.GetAPIReader(), Excluded: sets.New(d.DistributionExcludedNamespaces...)}
	prologue := kit.Object[*appsv1alpha1.ResourceDistribution]{Reader: r.Client, Kind: "ResourceDistribution", Pass: r.reconcile}
	return kit.Setup(mgr, d, Name, prologue, func(b *kit.Builder) *kit.Builder {
		return b.For(&appsv1alpha1.ResourceDistribution{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
			Watches(&corev1.Namespace{}, kit.All(r.Client, &appsv1alpha1.ResourceDistributionList{}), kit.OnUpdate(namespaceChanged))
	})
}

// namespaceChanged passes the namespace changes that can move a namespace in or out of the
// targets: its labels, or the start of its termination (kit.OnUpdate passes creations and
// deletions; a watch of a kind sends no generic events).
func namespaceChanged(old, cur client.Object) bool {
	return !apiequality.Semantic.DeepEqual(old.GetLabels(), cur.GetLabels()) ||
		(old.GetDeletionTimestamp() == nil) != (cur.GetDeletionTimestamp() == nil)
}

// Reconciler distributes the resources of ResourceDistributions.
type Reconciler struct {
	// Tools' Client reads ResourceDistributions and namespaces from the cache and writes.
	kit.Tools
	// Copies reads the copies by name, uncached.
	Copies client.Reader
	// Excluded are the namespaces no ResourceDistribution copies into
	// (--resourcedistribution-excluded-namespaces); copies found there are deleted.
	Excluded sets.Set[string]
}

// scope is what one pass reads.
type scope struct {
	rd       *appsv1alpha1.ResourceDistribution
	resource *unstructured.Unstructured
	hash     string
	// matched and unmatched are the target namespaces and the other existing ones.
	matched, unmatched []string
	// active holds the existing namespaces that are not terminating.
	active sets.Set[string]
}

// reconcile reads the ResourceDistribution and the namespaces, creates, updates and deletes
// copies, and writes the status when it changed.
func (r *Reconciler) reconcile(ctx context.Context, rd *appsv1alpha1.ResourceDistribution) (ctrl.Result, error) {
	sc, err := r.read(ctx, rd)
	if err != nil {
		if errors.Is(err, reconcile.TerminalError(nil)) {
			r.Recorder.Eventf(rd, corev1.EventTypeWarning, "InvalidSpec", "%v", err)
		}
		return ctrl.Result{}, err
	}
	failures := r.apply(ctx, sc)
	status := computeStatus(rd, len(sc.matched), failures, metav1.NewTime(r.Clock.Now()))
	if stale, err := kit.WriteStatus(ctx, r.Client, rd.DeepCopy(), func(rd *appsv1alpha1.ResourceDistribution) { rd.Status = status }); err != nil || !stale.IsZero() {
		return stale, err
	}
	// Failures other than conflicts and missing namespaces may pass on a retry; those two wait
	// for a change of the namespaces or of the spec.
	for _, f := range failures {
		if f.condition != appsv1alpha1.ResourceDistributionConflictOccurred && f.condition != appsv1alpha1.ResourceDistributionNamespaceNotExists {
			return ctrl.Result{}, fmt.Errorf("namespace %s: %w", f.namespace, f.err)
		}
	}
	return ctrl.Result{}, nil
}

func (r *Reconciler) read(ctx context.Context, rd *appsv1alpha1.ResourceDistribution) (*scope, error) {
	resource, err := DecodeResource(rd.Spec.Resource.Raw)
	if err != nil {
		return nil, reconcile.TerminalError(fmt.Errorf("spec.resource: %w", err))
	}
	namespaces := &corev1.NamespaceList{}
	if err := r.Client.List(ctx, namespaces); err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	matched, unmatched, err := targetNamespaces(&rd.Spec.Targets, namespaces.Items, r.Excluded)
	if err != nil {
		return nil, reconcile.TerminalError(err)
	}
	active := sets.New[string]()
	for _, ns := range namespaces.Items {
		if ns.DeletionTimestamp == nil {
			active.Insert(ns.Name)
		}
	}
	return &scope{rd: rd, resource: resource, hash: HashResource(rd.Spec.Resource.Raw), matched: matched, unmatched: unmatched, active: active}, nil
}

// apply brings every namespace's copy to what decide says and returns what failed.
func (r *Reconciler) apply(ctx context.Context, sc *scope) []failure {
	log := ctrl.LoggerFrom(ctx)
	var failures []failure
	visit := func(ns string, targeted bool) {
		active := sc.active.Has(ns)
		var existing *unstructured.Unstructured
		if active {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(sc.resource.GroupVersionKind())
			err := r.Copies.Get(ctx, client.ObjectKey{Namespace: ns, Name: sc.resource.GetName()}, got)
			switch {
			case err == nil:
				existing = got
			case !apierrors.IsNotFound(err):
				failures = append(failures, failure{appsv1alpha1.ResourceDistributionGetResourceFailed, ns, err})
				return
			}
		}
		var want *unstructured.Unstructured
		if targeted && active {
			want = desiredCopy(sc.rd, sc.resource, sc.hash, ns, existing)
		}
		kind, name := sc.resource.GetKind(), sc.resource.GetName()
		switch decide(sc.rd, targeted, active, existing, want) {
		case actionMissing:
			failures = append(failures, failure{appsv1alpha1.ResourceDistributionNamespaceNotExists, ns, fmt.Errorf("namespace not found or terminating")})
		case actionConflict:
			failures = append(failures, failure{appsv1alpha1.ResourceDistributionConflictOccurred, ns,
				fmt.Errorf("a %s named %s that this ResourceDistribution does not control already exists", kind, name)})
		case actionCreate:
			if err := r.Client.Create(ctx, want); err != nil {
				failures = append(failures, failure{appsv1alpha1.ResourceDistributionCreateResourceFailed, ns, err})
				return
			}
			log.V(2).Info("Created copy", kind, klog.KRef(ns, name))
		case actionUpdate:
			if err := r.Client.Update(ctx, want); err != nil {
				failures = append(failures, failure{appsv1alpha1.ResourceDistributionUpdateResourceFailed, ns, err})
				return
			}
			log.V(2).Info("Updated copy", kind, klog.KRef(ns, name))
		case actionDelete:
			uid := existing.GetUID()
			if err := r.Client.Delete(ctx, existing, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
				failures = append(failures, failure{appsv1alpha1.ResourceDistributionDeleteResourceFailed, ns, err})
				return
			}
			log.V(2).Info("Deleted copy from a namespace no longer targeted", kind, klog.KRef(ns, name))
		}
	}
	for _, ns := range sc.matched {
		visit(ns, true)
	}
	for _, ns := range sc.unmatched {
		visit(ns, false)
	}
	return failures
}
