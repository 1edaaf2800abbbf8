package daemonset

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/lifecycle"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podsort"
	"github.com/kruise-addon/kruise-addon/controllers/internal/rollout"
)

// defaultBurstReplicas is burstReplicas when the spec leaves it out.
const defaultBurstReplicas = 250

// createRequeue is when a DaemonSet with pods left to create after this reconcile's share is
// looked at again, if no pod event brings it back sooner.
const createRequeue = time.Second

// sync moves running in-place updates and hooks along, then plans and applies one step.
func (r *Reconciler) sync(ctx context.Context, s *scope) (ctrl.Result, error) {
	var requeue rollout.Requeue
	updating, err := r.refresh(ctx, s, &requeue)
	if err != nil {
		return ctrl.Result{}, err
	}
	in, err := r.planInput(s, updating)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := r.Clock.Now()
	for _, pod := range s.allPods() {
		requeue.After(podsort.AvailableIn(pod, s.ds.Spec.MinReadySeconds, now))
	}
	p := makePlan(in)
	more, err := r.apply(ctx, s, p)
	if err != nil {
		return ctrl.Result{}, err
	}
	requeue.When(p.deferred > 0 || more, createRequeue)
	return ctrl.Result{RequeueAfter: time.Duration(requeue)}, nil
}

// refresh moves in-place updates towards completion and lifecycle states towards Normal, the
// pods' writes concurrently. It returns the UIDs of the pods whose in-place update has not
// finished.
func (r *Reconciler) refresh(ctx context.Context, s *scope, requeue *rollout.Requeue) (map[types.UID]bool, error) {
	// One slice of every node's pods, so that the writes of all nodes go out together.
	type at struct {
		node string
		i    int
	}
	var all []*corev1.Pod
	var where []at
	for node, pods := range s.pods {
		for i, pod := range pods {
			all = append(all, pod)
			where = append(where, at{node, i})
		}
	}
	res, err := r.writer(s).Refresher().Pods(ctx, s.ds.Spec.Lifecycle, all, s.isUpdated, nil)
	if err != nil {
		return nil, err
	}
	for k, w := range where {
		s.pods[w.node][w.i] = all[k]
	}
	requeue.After(res.RequeueAfter)
	return res.Updating, nil
}

// planInput turns the scope into what the planner needs. It decides, once for each revision old
// pods are at, whether they reach the update revision in place or by being recreated.
func (r *Reconciler) planInput(s *scope, updating map[types.UID]bool) (planInput, error) {
	ds := s.ds
	tmpl := &ds.Spec.Template
	now := r.Clock.Now()
	in := planInput{
		rolling:     ds.Spec.UpdateStrategy.Type != appsv1alpha1.OnDeleteDaemonSetStrategyType,
		progressive: ds.Annotations[appsv1alpha1.ProgressiveCreatePodAnnotation] == "true",
	}

	var updateSelector labels.Selector
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ru != nil && ru.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(ru.Selector)
		if err != nil {
			return planInput{}, fmt.Errorf("read spec.updateStrategy.rollingUpdate.selector: %w", err)
		}
		updateSelector = sel
	}

	// A revision no longer in history is decided under the name "".
	routes := r.routes(s)
	podInfos := func(pods []*corev1.Pod) ([]podInfo, error) {
		var out []podInfo
		for _, pod := range pods {
			hooks := lifecycle.Observe(ds.Spec.Lifecycle, pod, s.isUpdated(pod))
			pi := podInfo{
				pod:           pod,
				updated:       hooks.AtUpdateRevision,
				failed:        pod.Status.Phase == corev1.PodFailed,
				available:     !updating[pod.UID] && inplaceupdate.NotUnready(pod) && podsort.IsAvailable(pod, ds.Spec.MinReadySeconds, now),
				state:         hooks.State,
				preDeleteHeld: hooks.PreDeleteHeld,
			}
			if !pi.updated {
				from := ""
				if rev := s.revisionOf(pod); rev != nil {
					from = rev.Name
				}
				d, err := routes.For(from)
				if err != nil {
					return nil, err
				}
				pi.route, pi.inPlace = d.Route, d.Plan
				// A pod without the InPlaceUpdateReady gate could not leave Service endpoints
				// while it updates, so it is recreated instead.
				if pi.route == inplaceupdate.RouteInPlace && !inplaceupdate.HasReadinessGate(pod) {
					pi.route, pi.inPlace = inplaceupdate.RouteRecreate, nil
				}
			}
			out = append(out, pi)
		}
		return out, nil
	}

	seen := map[string]bool{}
	desired := 0
	add := func(name string, node *corev1.Node) error {
		seen[name] = true
		ni := nodeInfo{name: name, selected: true, terminating: s.terminating[name], gone: node == nil}
		if node != nil {
			ni.placement = nodePlacement(node, tmpl)
			if updateSelector != nil {
				ni.selected = updateSelector.Matches(labels.Set(node.Labels))
			}
		}
		if ni.shouldRun {
			desired++
		}
		pis, err := podInfos(s.pods[name])
		if err != nil {
			return err
		}
		ni.pods = pis
		in.nodes = append(in.nodes, ni)
		return nil
	}
	for _, node := range s.nodes {
		if err := add(node.Name, node); err != nil {
			return planInput{}, err
		}
	}
	// Pods on nodes that are gone are removed like pods on a node that must not keep them.
	for name := range s.pods {
		if !seen[name] {
			if err := add(name, nil); err != nil {
				return planInput{}, err
			}
		}
	}

	in.burst = rollout.Scaled(ds.Spec.BurstReplicas, intstr.FromInt32(defaultBurstReplicas), desired, true)
	if ru != nil {
		in.paused = ptr.Deref(ru.Paused, false)
		in.partition = int(ptr.Deref(ru.Partition, 0))
		in.maxUnavailable = rollout.Scaled(ru.MaxUnavailable, intstr.FromInt32(1), desired, true)
		in.maxSurge = rollout.Scaled(ru.MaxSurge, intstr.FromInt32(0), desired, true)
		if ru.Type == appsv1alpha1.DeprecatedSurgingRollingUpdateType && in.maxSurge == 0 {
			// The old spelling of a surge of one pod, with no pod unavailable.
			in.maxSurge, in.maxUnavailable = 1, 0
		}
		if ru.Type == appsv1alpha1.InplaceRollingUpdateType {
			in.maxSurge = 0
		}
	} else {
		in.maxUnavailable = 1
	}
	// A DaemonSet set up for neither surge nor unavailability updates one node at a time.
	if desired > 0 && in.maxUnavailable == 0 && in.maxSurge == 0 {
		in.maxUnavailable = 1
	}
	return in, nil
}

// routes decides how pods reach the update revision: in place when the rolling update is
// InPlaceIfPossible and the change allows it, else by recreation (see podowner.Base.Routes).
func (r *Reconciler) routes(s *scope) inplaceupdate.Routes {
	policy := inplaceupdate.PolicyRecreate
	if ru := s.ds.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Type == appsv1alpha1.InplaceRollingUpdateType {
		policy = inplaceupdate.PolicyInPlaceIfPossible
	}
	return r.Routes(policy, s.Tracked, nil)
}
