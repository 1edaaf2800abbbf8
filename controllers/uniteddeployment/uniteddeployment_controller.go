package uniteddeployment

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/controllers/internal/kit"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ownedpods"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/controllers/setup"
)

// controllerKind is the GroupVersionKind of UnitedDeployment, for owner references.
var controllerKind = appsv1alpha1.GroupVersion.WithKind("UnitedDeployment")

// Name is the controller's name and the prefix of its --uniteddeployment-workers flag.
const Name = "uniteddeployment"

// defaultRevisionHistoryLimit is how many unused revisions are kept when the spec does not say.
const defaultRevisionHistoryLimit = 10

// Reconciler reconciles UnitedDeployments.
type Reconciler struct {
	client   client.Client
	recorder record.EventRecorder
	clock    clock.Clock
	history  revision.History
	// subsets awaits the cache's view of the subset workloads we created or deleted; updates
	// awaits our updates of them.
	subsets *expectations.Scale
	updates *expectations.ResourceVersion
}

// SetupWithManager registers the UnitedDeployment controller. It watches the four subset kinds
// it owns; pods are read from the cache when a reconcile needs them.
func SetupWithManager(mgr manager.Manager, d setup.Deps) error {
	r := newReconciler(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetEventRecorderFor("uniteddeployment-controller"), d.Clock)
	prologue := kit.Object[*appsv1alpha1.UnitedDeployment]{Reader: r.client, Kind: "UnitedDeployment", Gone: kit.Forget(r.subsets.Forget), Pass: r.reconcile}
	return kit.Setup(mgr, d, Name, prologue, func(b *kit.Builder) *kit.Builder {
		return b.For(&appsv1alpha1.UnitedDeployment{}).
			Owns(&appsv1alpha1.CloneSet{}).
			Owns(&appsv1beta1.StatefulSet{}).
			Owns(&appsv1.StatefulSet{}).
			Owns(&appsv1.Deployment{}).
			Owns(&appsv1.ControllerRevision{})
	})
}

func newReconciler(c client.Client, live client.Reader, rec record.EventRecorder, clk clock.Clock) *Reconciler {
	return &Reconciler{
		client: c, recorder: rec, clock: clk,
		history: revision.History{Client: c, Live: live},
		subsets: expectations.NewScale(clk),
		updates: expectations.NewResourceVersion(clk),
	}
}

// reconcile moves one UnitedDeployment, found and not being deleted, towards its spec.
func (r *Reconciler) reconcile(ctx context.Context, ud *appsv1alpha1.UnitedDeployment) (reconcile.Result, error) {
	logger, key := log.FromContext(ctx), kit.Key(ud)
	if adapterFor(ud.Spec.Template) == nil || ud.Spec.Selector == nil {
		// The webhook refuses this; without it there is nothing to run.
		return reconcile.Result{}, reconcile.TerminalError(fmt.Errorf("spec.template sets no workload template or spec.selector is unset"))
	}

	s, err := r.readScope(ctx, ud)
	if err != nil {
		return reconcile.Result{}, err
	}
	if r.awaitCache(ctx, key, s) {
		return reconcile.Result{RequeueAfter: time.Second}, nil
	}

	now := r.clock.Now()
	p := decide(s, now)
	var out outcome
	if p.allocErr != nil {
		r.event(ud, corev1.EventTypeWarning, "FailedSpecifySubsetReplicas", "Specified subset replicas is ineffective: %v", p.allocErr)
	} else {
		out = r.apply(ctx, key, s, p)
	}
	st := computeStatus(s, p, out, now)
	stale, err := kit.WriteStatus(ctx, r.client, ud.DeepCopy(), func(ud *appsv1alpha1.UnitedDeployment) { ud.Status = st })
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := r.truncateHistory(ctx, s, st); err != nil {
		return reconcile.Result{}, err
	}
	switch {
	case p.allocErr != nil:
		return reconcile.Result{}, reconcile.TerminalError(p.allocErr)
	case out.provisionErr != nil:
		return reconcile.Result{}, out.provisionErr
	case out.updateErr != nil:
		return reconcile.Result{}, out.updateErr
	}
	if p.requeueAfter > 0 {
		logger.V(4).Info("Looking again when a pending pod times out or a subset recovers", "after", p.requeueAfter)
	}
	return kit.Sooner(reconcile.Result{RequeueAfter: p.requeueAfter}, stale), nil
}

// awaitCache reports whether the cache has yet to show subset workloads we created, deleted or
// updated, for at most ownedpods.ExpectationTimeout.
func (r *Reconciler) awaitCache(ctx context.Context, key string, s *scope) bool {
	present := map[string]bool{}
	for _, w := range s.workloads {
		present[w.obj.GetName()] = true
	}
	for _, obj := range s.strays {
		present[obj.GetName()] = true
	}
	for _, name := range r.subsets.Pending(key)[expectations.Create] {
		if present[name] {
			r.subsets.Observe(key, expectations.Create, name)
		}
	}
	for _, name := range r.subsets.Pending(key)[expectations.Delete] {
		if !present[name] {
			r.subsets.Observe(key, expectations.Delete, name)
		}
	}
	if ownedpods.AwaitScale(log.FromContext(ctx), r.subsets, key) {
		return true
	}
	for _, w := range s.workloads {
		if ok, waited := r.updates.Satisfied(w.obj); !ok && waited < ownedpods.ExpectationTimeout {
			return true
		}
	}
	return false
}

// apply carries out the plan: it creates, updates and deletes subset workloads.
func (r *Reconciler) apply(ctx context.Context, key string, s *scope, p plan) outcome {
	ud := s.ud
	logger := log.FromContext(ctx)
	var out outcome
	subsets := map[string]*appsv1alpha1.Subset{}
	for i := range ud.Spec.Topology.Subsets {
		subsets[ud.Spec.Topology.Subsets[i].Name] = &ud.Spec.Topology.Subsets[i]
	}
	var provisionErrs, updateErrs []error
	for _, name := range p.creates {
		obj := s.kind.newObject()
		if err := buildSubset(s.kind, ud, subsets[name], s.Update.Name, p.replicas[name], p.partitions[name], obj); err != nil {
			provisionErrs = append(provisionErrs, err)
			continue
		}
		if err := r.client.Create(ctx, obj); err != nil {
			provisionErrs = append(provisionErrs, fmt.Errorf("create %s of subset %s: %w", s.kind.kind(), name, err))
			continue
		}
		r.subsets.Expect(key, expectations.Create, obj.GetName())
		out.provisioned = true
		logger.V(2).Info("Created subset workload", "subset", name, s.kind.kind(), klog.KObj(obj), "replicas", p.replicas[name])
	}
	for _, obj := range p.deletes {
		err := r.client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !apierrors.IsNotFound(err) {
			provisionErrs = append(provisionErrs, fmt.Errorf("delete subset workload %s: %w", obj.GetName(), err))
			continue
		}
		r.subsets.Expect(key, expectations.Delete, obj.GetName())
		r.updates.Forget(obj.GetUID())
		out.provisioned = true
		logger.V(2).Info("Deleted subset workload", "name", klog.KObj(obj), "subset", obj.GetLabels()[appsv1alpha1.SubSetNameLabelKey])
	}
	for _, w := range p.updates {
		obj := w.obj.DeepCopyObject().(client.Object)
		if err := buildSubset(s.kind, ud, subsets[w.subset], s.Update.Name, p.replicas[w.subset], p.partitions[w.subset], obj); err != nil {
			updateErrs = append(updateErrs, err)
			continue
		}
		if err := r.client.Update(ctx, obj); err != nil {
			updateErrs = append(updateErrs, fmt.Errorf("update %s of subset %s: %w", s.kind.kind(), w.subset, err))
			r.event(ud, corev1.EventTypeWarning, "FailedUpdateSubset", "Updating %s %s of subset %s: %v", s.kind.kind(), obj.GetName(), w.subset, err)
			continue
		}
		r.updates.Expect(obj)
		logger.V(2).Info("Updated subset workload", "subset", w.subset, s.kind.kind(), klog.KObj(obj),
			"replicas", p.replicas[w.subset], "partition", p.partitions[w.subset], "revision", s.Update.Name)
	}
	if len(p.creates)+len(p.deletes) > 0 && len(provisionErrs) == 0 {
		r.event(ud, corev1.EventTypeNormal, "SuccessfulSubsetsUpdate", "Created %d and deleted %d subset workloads (%s)", len(p.creates), len(p.deletes), s.kind.kind())
	}
	out.provisionErr = joinErrs(provisionErrs)
	out.updateErr = joinErrs(updateErrs)
	return out
}

// truncateHistory deletes the oldest unused revisions beyond revisionHistoryLimit.
func (r *Reconciler) truncateHistory(ctx context.Context, s *scope, st appsv1alpha1.UnitedDeploymentStatus) error {
	limit := defaultRevisionHistoryLimit
	if s.ud.Spec.RevisionHistoryLimit != nil {
		limit = int(*s.ud.Spec.RevisionHistoryLimit)
	}
	inUse := map[string]bool{s.Update.Name: true, s.Current.Name: true, st.CurrentRevision: true}
	for _, w := range s.workloads {
		inUse[w.obj.GetLabels()[appsv1alpha1.ControllerRevisionHashLabelKey]] = true
	}
	return r.history.Truncate(ctx, s.History, inUse, limit)
}

// event records a Kubernetes event on the UnitedDeployment.
func (r *Reconciler) event(ud *appsv1alpha1.UnitedDeployment, typ, reason, format string, args ...any) {
	if r.recorder != nil {
		r.recorder.Eventf(ud, typ, reason, format, args...)
	}
}

func joinErrs(errs []error) error {
	return errors.Join(errs...)
}
