package cloneset

import (
	"context"
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/lifecycle"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podsort"
	"github.com/kruise-addon/kruise-addon/controllers/internal/revision"
	"github.com/kruise-addon/kruise-addon/controllers/internal/rollout"
	"github.com/kruise-addon/kruise-addon/features"
)

// sync moves running updates and hooks along, then plans and applies one step. The plan's
// outcome is returned for the status, also when applying it fails.
func (r *Reconciler) sync(ctx context.Context, s *scope) (ctrl.Result, outcome, error) {
	var requeue rollout.Requeue
	if err := r.truncatePodsToDelete(ctx, s); err != nil {
		return ctrl.Result{}, outcome{}, err
	}
	// In-place updates move towards completion and lifecycle states towards Normal.
	refreshed, err := r.writer(s).Refresher().Pods(ctx, s.cs.Spec.Lifecycle, s.pods, r.atTarget(s), nil)
	if err != nil {
		return ctrl.Result{}, outcome{}, err
	}
	requeue.After(refreshed.RequeueAfter)
	in, err := r.planInput(s, refreshed.Updating)
	if err != nil {
		return ctrl.Result{}, outcome{}, updateError(err)
	}
	for _, pi := range in.pods {
		requeue.When(!pi.available, podsort.AvailableIn(pi.pod, in.minReadySeconds, in.now))
	}
	p := makePlan(in)
	out := planOutcome(s, p)
	more, err := r.apply(ctx, s, p)
	if err != nil {
		return ctrl.Result{}, out, err
	}
	requeue.When(more, createRequeue)
	requeue.When(s.budgetHeld.Load(), budgetRequeue)
	return ctrl.Result{RequeueAfter: time.Duration(requeue)}, out, nil
}

// planInput turns the scope into what the planner needs. It decides, once for each revision
// that old pods are at, whether they reach the update revision in place or by being recreated.
func (r *Reconciler) planInput(s *scope, updating map[types.UID]bool) (planInput, error) {
	cs := s.cs
	replicas := int(ptr.Deref(cs.Spec.Replicas, 1))
	us := cs.Spec.UpdateStrategy
	in := planInput{
		replicas:                replicas,
		partition:               partitionCount(us.Partition, replicas),
		maxUnavailable:          rollout.Scaled(us.MaxUnavailable, intstr.FromString(appsv1alpha1.DefaultCloneSetMaxUnavailable), replicas, false),
		maxSurge:                rollout.Scaled(us.MaxSurge, intstr.FromInt32(0), replicas, true),
		scaleMaxUnavailable:     -1,
		paused:                  us.Paused,
		sameRevision:            s.Current.Name == s.Update.Name,
		excludePreparingDelete:  r.excludePreparingDelete || cs.Labels[appsv1alpha1.CloneSetScalingExcludePreparingDeleteKey] == "true",
		preparingUpdateAsUpdate: r.Gates.Enabled(features.PreparingUpdateAsUpdate),
		rollback:                r.Gates.Enabled(features.CloneSetPartitionRollback),
		reuseClaims:             reusesClaims(cs),
		priority:                us.PriorityStrategy,
		minReadySeconds:         cs.Spec.MinReadySeconds,
		now:                     r.Clock.Now(),
	}
	if us.Type == appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType {
		in.maxSurge = 0
	}
	if cs.Spec.ScaleStrategy.MaxUnavailable != nil {
		in.scaleMaxUnavailable = rollout.Scaled(cs.Spec.ScaleStrategy.MaxUnavailable, intstr.FromInt32(0), replicas, true)
	}
	for _, t := range us.ScatterStrategy {
		in.scatter = append(in.scatter, podsort.ScatterTerm{Key: t.Key, Value: t.Value})
	}
	toDelete := map[string]bool{}
	for _, n := range cs.Spec.ScaleStrategy.PodsToDelete {
		toDelete[n] = true
	}
	routes, back := r.routes(s), r.rollbackRoutes(s)
	// With RecreatePodWhenChangeVCTInCloneSetGate, pods whose claim templates changed are
	// recreated with new claims, unless the update strategy is InPlaceOnly, which ignores them.
	recreateForClaims := r.Gates.Enabled(features.RecreatePodWhenChangeVCTInCloneSetGate) && us.Type != appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
	for _, pod := range s.pods {
		// Pods on a revision that is neither current nor update count as old: they are
		// updated like current ones.
		// A pod the user names in podsToDelete is the user's deletion, even if the CloneSet
		// marked it for a recreate before.
		hooks := lifecycle.Observe(cs.Spec.Lifecycle, pod, s.isUpdated(pod))
		pi := podInfo{
			pod:             pod,
			updated:         hooks.AtUpdateRevision,
			state:           hooks.State,
			specified:       toDelete[pod.Name] || pod.Labels[appsv1alpha1.SpecifiedDeleteKey] != "",
			recreate:        !toDelete[pod.Name] && pod.Labels[appsv1alpha1.SpecifiedDeleteKey] == recreateMark,
			available:       !updating[pod.UID] && inplaceupdate.NotUnready(pod) && podsort.IsAvailable(pod, cs.Spec.MinReadySeconds, in.now),
			preDeleteHooked: hooks.PreDeleteHeld,
			inPlaceHooked:   hooks.InPlaceHeld,
		}
		var d inplaceupdate.Decision
		var err error
		switch {
		case !pi.updated:
			d, err = routes.For(s.revisionOf(pod))
			pi.freshClaims = recreateForClaims && claimsChanged(revision.Named(s.History, s.revisionOf(pod)), s.Update)
		case in.rollback && !in.sameRevision:
			d, err = back.For(s.revisionOf(pod))
			pi.freshClaims = recreateForClaims && claimsChanged(revision.Named(s.History, s.revisionOf(pod)), s.Current)
		}
		if err != nil {
			return planInput{}, err
		}
		if pi.freshClaims {
			d = inplaceupdate.Decision{Route: inplaceupdate.RouteRecreate}
		}
		pi.route, pi.inPlace = d.Route, d.Plan
		in.pods = append(in.pods, pi)
	}
	return in, nil
}

// reusesClaims reports whether a recreated pod's replacement takes the pod's instance ID and so
// its PVCs: the CloneSet has volumeClaimTemplates and scaleStrategy.disablePVCReuse is not set.
func reusesClaims(cs *appsv1alpha1.CloneSet) bool {
	return len(cs.Spec.VolumeClaimTemplates) > 0 && !cs.Spec.ScaleStrategy.DisablePVCReuse
}

// routes decides how pods reach the update revision under the CloneSet's update strategy type
// (see podowner.Base.Routes).
func (r *Reconciler) routes(s *scope) inplaceupdate.Routes {
	us := s.cs.Spec.UpdateStrategy
	policy := inplaceupdate.PolicyOf(us.Type, appsv1alpha1.RecreateCloneSetUpdateStrategyType, appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType)
	return r.Routes(policy, s.Tracked, us.InPlaceUpdateStrategy)
}

// rollbackRoutes decides how updated pods go back to the current revision, for partition
// rollback: the same decision as routes, towards the current revision.
func (r *Reconciler) rollbackRoutes(s *scope) inplaceupdate.Routes {
	us := s.cs.Spec.UpdateStrategy
	policy := inplaceupdate.PolicyOf(us.Type, appsv1alpha1.RecreateCloneSetUpdateStrategyType, appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType)
	back := s.Tracked
	back.Update = s.Current
	return r.Routes(policy, back, us.InPlaceUpdateStrategy)
}

// atTarget tells whether a pod is at the revision its in-place update moves it to, for the
// lifecycle refresh: the update revision, or, while partition rollback is on, also the current
// revision that a rolled-back pod moves to.
func (r *Reconciler) atTarget(s *scope) func(*corev1.Pod) bool {
	if !r.Gates.Enabled(features.CloneSetPartitionRollback) {
		return s.isUpdated
	}
	return func(pod *corev1.Pod) bool { return s.isUpdated(pod) || s.revisionOf(pod) == s.Current.Name }
}

// partitionCount is how many pods stay at the current revision. A percentage rounds up, but one
// below 100% always lets at least one pod update.
func partitionCount(p *intstr.IntOrString, replicas int) int {
	if p == nil {
		return 0
	}
	n := rollout.Scaled(p, intstr.FromInt32(0), replicas, true)
	if p.Type == intstr.String && n >= replicas && replicas > 0 && p.StrVal != "100%" {
		n = replicas - 1
	}
	return min(n, replicas)
}

// truncatePodsToDelete drops from spec.scaleStrategy.podsToDelete the names of pods that no
// longer exist, as the API documents, so the list does not grow without end.
func (r *Reconciler) truncatePodsToDelete(ctx context.Context, s *scope) error {
	names := s.cs.Spec.ScaleStrategy.PodsToDelete
	if len(names) == 0 {
		return nil
	}
	exists := map[string]bool{}
	for _, p := range append(append([]*corev1.Pod{}, s.pods...), s.terminating...) {
		exists[p.Name] = true
	}
	var keep []string
	for _, n := range names {
		if exists[n] {
			keep = append(keep, n)
		}
	}
	if len(keep) == len(names) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"scaleStrategy": map[string]any{"podsToDelete": keep}}})
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, s.cs, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return errorf(err, "drop deleted pods from spec.scaleStrategy.podsToDelete")
	}
	return nil
}
