package statefulset

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/lifecycle"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podsort"
	"github.com/kruise-addon/kruise-addon/controllers/internal/rollout"
	"github.com/kruise-addon/kruise-addon/features"
)

// createRequeue is when a StatefulSet with pods left to create after this reconcile's share is
// looked at again, if no pod event brings it back sooner.
const createRequeue = time.Second

// sync moves running updates and hooks along, then plans and applies one step. The plan's
// outcome is returned for the status, also when applying it fails.
func (r *Reconciler) sync(ctx context.Context, s *scope) (ctrl.Result, outcome, error) {
	var requeue rollout.Requeue
	// In-place updates move towards completion and lifecycle states towards Normal; pods being
	// deleted are left alone.
	deleting := func(p *corev1.Pod) bool { return p.DeletionTimestamp != nil }
	refreshed, err := r.writer(s).Refresher().Pods(ctx, s.set.Spec.Lifecycle, s.pods, s.isUpdated, deleting)
	if err != nil {
		return ctrl.Result{}, outcome{}, err
	}
	requeue.After(refreshed.RequeueAfter)
	in, err := r.planInput(s, refreshed.Updating)
	if err != nil {
		return ctrl.Result{}, outcome{}, updateError(err)
	}
	for _, pi := range in.pods {
		requeue.When(pi.ready && !pi.available, podsort.AvailableIn(pi.pod, in.minReadySeconds, in.now))
	}
	p := makePlan(in)
	out := planOutcome(s, p)
	more, err := r.apply(ctx, s, p)
	if err != nil {
		return ctrl.Result{}, out, err
	}
	requeue.When(more || s.budgetHeld.Load(), createRequeue)
	return ctrl.Result{RequeueAfter: time.Duration(requeue)}, out, nil
}

// rollingUpdate returns the RollingUpdate settings with 1.8's defaults for those not set.
func rollingUpdate(set *appsv1beta1.StatefulSet) appsv1beta1.RollingUpdateStatefulSetStrategy {
	var ru appsv1beta1.RollingUpdateStatefulSetStrategy
	if set.Spec.UpdateStrategy.RollingUpdate != nil {
		ru = *set.Spec.UpdateStrategy.RollingUpdate
	}
	if ru.MaxUnavailable == nil {
		ru.MaxUnavailable = ptr.To(intstr.FromInt32(1))
	}
	if ru.PodUpdatePolicy == "" {
		ru.PodUpdatePolicy = appsv1beta1.RecreatePodUpdateStrategyType
	}
	return ru
}

// minReadySeconds is how long a pod must be ready to count as available.
func minReadySeconds(set *appsv1beta1.StatefulSet) int32 {
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		return ptr.Deref(ru.MinReadySeconds, 0)
	}
	return 0
}

// planInput turns the scope into what the planner needs. It decides, once for each revision
// that old pods are at, whether they reach the update revision in place or by being recreated.
func (r *Reconciler) planInput(s *scope, updating map[types.UID]bool) (planInput, error) {
	set := s.set
	ru := rollingUpdate(set)
	replicas := s.ordinals.Len()
	parallel := set.Spec.PodManagementPolicy == appsv1.ParallelPodManagement
	in := planInput{
		ordinals:            s.ordinals,
		parallel:            parallel,
		rollingUpdate:       set.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType,
		partition:           min(replicas, max(0, int(ptr.Deref(ru.Partition, 0)))),
		maxUnavailable:      1,
		scaleMaxUnavailable: -1,
		paused:              ru.Paused,
		sameRevision:        s.Current.Name == s.Update.Name,
		minReadySeconds:     ptr.Deref(ru.MinReadySeconds, 0),
		now:                 r.Clock.Now(),
	}
	if parallel {
		in.maxUnavailable = max(1, rollout.Scaled(ru.MaxUnavailable, intstr.FromInt32(0), replicas, false))
		if ss := set.Spec.ScaleStrategy; ss != nil && ss.MaxUnavailable != nil {
			in.scaleMaxUnavailable = max(1, rollout.Scaled(ss.MaxUnavailable, intstr.FromInt32(0), replicas, true))
		}
		if ru.UnorderedUpdate != nil {
			in.unordered, in.priority = true, ru.UnorderedUpdate.PriorityStrategy
		}
	}
	in.resizeClaims = r.Gates.Enabled(features.StatefulSetAutoResizePVCGate) &&
		set.Spec.VolumeClaimUpdateStrategy.Type == appsv1beta1.OnPodRollingUpdateVolumeClaimUpdateStrategyType
	if pol := set.Spec.PersistentVolumeClaimRetentionPolicy; pol != nil && r.Gates.Enabled(features.StatefulSetAutoDeletePVC) {
		in.deleteClaimsOnScaleDown = pol.WhenScaled == appsv1beta1.DeletePersistentVolumeClaimRetentionPolicyType
	}
	routes := r.routes(s, ru)
	for _, pod := range s.pods {
		o, _ := ordinalOf(set.Name, pod.Name)
		hooks := lifecycle.Observe(set.Spec.Lifecycle, pod, s.isUpdated(pod))
		ready := pod.Status.Phase == corev1.PodRunning && podsort.IsReady(pod) && !updating[pod.UID] && inplaceupdate.NotUnready(pod)
		pi := podInfo{
			pod:             pod,
			ordinal:         o,
			updated:         hooks.AtUpdateRevision,
			terminating:     pod.DeletionTimestamp != nil,
			finished:        pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed,
			pending:         pod.Status.Phase == corev1.PodPending,
			claimsMissing:   s.claimsMissing(o),
			ready:           ready,
			available:       ready && podsort.IsAvailable(pod, in.minReadySeconds, in.now),
			state:           hooks.State,
			specified:       pod.Labels[appsv1alpha1.SpecifiedDeleteKey] != "",
			preDeleteHooked: hooks.PreDeleteHeld,
			inPlaceHooked:   hooks.InPlaceHeld,
		}
		if in.resizeClaims {
			pi.claims = s.claimStateOf(o)
		}
		if !pi.updated && !pi.terminating {
			d, err := routes.For(revisionOf(pod))
			if err != nil {
				return planInput{}, err
			}
			pi.route, pi.inPlace = d.Route, d.Plan
		}
		in.pods = append(in.pods, pi)
	}
	return in, nil
}

// claimsMissing reports whether a claim of ordinal o's volume claim templates does not exist.
func (s *scope) claimsMissing(o int) bool {
	for _, vct := range s.set.Spec.VolumeClaimTemplates {
		if _, ok := s.claims[claimName(vct.Name, s.set.Name, o)]; !ok {
			return true
		}
	}
	return false
}

// routes decides how pods reach the update revision under the rolling update's podUpdatePolicy
// (see podowner.Base.Routes).
func (r *Reconciler) routes(s *scope, ru appsv1beta1.RollingUpdateStatefulSetStrategy) inplaceupdate.Routes {
	policy := inplaceupdate.PolicyOf(ru.PodUpdatePolicy, appsv1beta1.RecreatePodUpdateStrategyType, appsv1beta1.InPlaceOnlyPodUpdateStrategyType)
	return r.Routes(policy, s.Tracked, ru.InPlaceUpdateStrategy)
}
