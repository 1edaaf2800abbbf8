package statefulset

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/lifecycle"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ordinals"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podsort"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podwrite"
	"github.com/kruise-addon/kruise-addon/controllers/internal/slowstart"
)

// podInfo is what the planner knows of one pod of the StatefulSet.
type podInfo struct {
	pod     *corev1.Pod
	ordinal int
	// updated is true when the pod is at the update revision.
	updated bool
	// terminating is true while the pod is being deleted: its ordinal is taken until it is gone.
	terminating bool
	// finished is true for a pod that Succeeded or Failed (an evicted pod): it is deleted and
	// created again.
	finished bool
	// ready is true when the pod is Running and Ready, and not in an in-place update.
	ready bool
	// pending is true for a pod in phase Pending; claimsMissing says that a claim of its
	// ordinal does not exist (deleted by someone while the pod waited), so it can never start.
	pending, claimsMissing bool
	// available is true when the pod has been ready for minReadySeconds.
	available bool
	state     appspub.LifecycleStateType
	// specified is true when the pod carries the apps.kruise.io/specified-delete label.
	specified bool
	// preDeleteHooked and inPlaceHooked say whether the preDelete or inPlaceUpdate hook holds
	// the pod.
	preDeleteHooked, inPlaceHooked bool
	// route is how the pod would reach the update revision, and inPlace its in-place plan when
	// the route is inplaceupdate.RouteInPlace. They mean nothing for an updated pod.
	route   inplaceupdate.Route
	inPlace *inplaceupdate.Plan
	// claims is how the pod's PVCs stand against the volume claim templates; it matters only
	// with planInput.resizeClaims.
	claims claimState
}

// unavailable reports whether the pod counts against maxUnavailable: not available, or, while
// PVCs are resized, with a PVC that has less capacity than it requests.
func (pi podInfo) unavailable(in planInput) bool {
	return !pi.available || (in.resizeClaims && !pi.claims.ready)
}

func (pi podInfo) hooks() lifecycle.Pod {
	return lifecycle.Pod{State: pi.state, PreDeleteHeld: pi.preDeleteHooked, InPlaceHeld: pi.inPlaceHooked, AtUpdateRevision: pi.updated}
}

// planInput is everything a plan is made from.
type planInput struct {
	// ordinals are the ordinals the StatefulSet's replicas take.
	ordinals ordinals.Set
	// parallel is podManagementPolicy Parallel; else pods are made and removed one at a time,
	// in order, and only while every pod before them is ready.
	parallel bool
	pods     []podInfo
	// rollingUpdate is the RollingUpdate strategy; false is OnDelete, which never updates a pod.
	rollingUpdate bool
	// partition is how many replicas, counted from the lowest ordinal (or, with an unordered
	// update, the last in update order), stay at the current revision.
	partition int
	// maxUnavailable bounds how many replicas may be unavailable while pods are updated or
	// specifically deleted; at least 1.
	maxUnavailable int
	// scaleMaxUnavailable bounds how many replicas may be unavailable while Parallel scaling
	// creates pods; negative means unbounded.
	scaleMaxUnavailable int
	paused              bool
	// sameRevision is true when the current and update revisions are the same.
	sameRevision bool
	// priority orders an unordered update (Parallel with unorderedUpdate); nil updates from the
	// highest ordinal down.
	priority  *appspub.UpdatePriorityStrategy
	unordered bool
	// deleteClaimsOnScaleDown is persistentVolumeClaimRetentionPolicy.whenScaled Delete.
	deleteClaimsOnScaleDown bool
	minReadySeconds         int32
	now                     time.Time
	// resizeClaims is StatefulSetAutoResizePVCGate with volumeClaimUpdateStrategy
	// OnPodRollingUpdate: a rolling update grows each pod's PVCs to the templates' size and waits
	// for them before it updates the pod.
	resizeClaims bool
}

// plan is what one reconcile does.
type plan struct {
	// create are the ordinals to create pods for, in order; current says the pod is made at the
	// current revision, to keep the partition. It holds at most one reconcile's share
	// (slowstart.MaxPerReconcile) of the createWanted pods the plan would create.
	create       []creation
	createWanted int
	// delete are pods to delete now.
	delete []deletion
	// prepareDelete are pods to move to PreparingDelete, because the preDelete hook holds them.
	prepareDelete []*corev1.Pod
	// update are pods to move to the update revision now, in place or by recreating them.
	update []podwrite.Update
	// prepareUpdate are pods to move to PreparingUpdate, because the inPlaceUpdate hook holds
	// their in-place update.
	prepareUpdate []*corev1.Pod
	// prepareRecreate are pods whose recreate the preDelete hook holds: they get the
	// specified-delete label and move to PreparingDelete.
	prepareRecreate []*corev1.Pod
	// stuck are pods an InPlaceOnly update cannot move in place; none of them is touched.
	stuck []*corev1.Pod
	// restoreClaims are the ordinals of pending pods whose missing claims are made again.
	restoreClaims []int
	// resize are pods whose PVCs grow to the volume claim templates' size now.
	resize []*corev1.Pod
	// halted says that OrderedReady scaling waits for a pod that is not ready.
	halted bool
}

type creation struct {
	ordinal int
	current bool
}

type deletion struct {
	pod *corev1.Pod
	// deleteClaims says the pod's PVCs go too (a scale-down with whenScaled Delete).
	deleteClaims bool
}

// makePlan decides a reconcile. It is pure: the same input always gives the same plan. Its work
// is bounded by the pods that exist and one reconcile's share of creations, never by replicas:
// the ordinals are arithmetic, and only the first missing ones are listed.
func makePlan(in planInput) plan {
	var p plan
	// The replicas' pods, ascending by ordinal, and the pods on an ordinal no replica takes.
	var replicas, condemned []podInfo
	taken := make(map[int]bool, len(in.pods))
	for _, pi := range in.pods {
		if !in.ordinals.Has(pi.ordinal) {
			condemned = append(condemned, pi)
			continue
		}
		replicas = append(replicas, pi)
		taken[pi.ordinal] = true
	}
	sort.Slice(replicas, func(i, j int) bool { return replicas[i].ordinal < replicas[j].ordinal })

	// A missing pod is unavailable, as is one terminating, finished or not available.
	missing := in.ordinals.Len() - len(replicas)
	unavailable := missing
	for _, pi := range replicas {
		if pi.terminating || pi.finished || pi.unavailable(in) {
			unavailable++
		}
	}
	p.createWanted = missing
	if in.parallel && in.scaleMaxUnavailable >= 0 {
		// Pods still missing are not unavailable yet; each one created becomes so.
		p.createWanted = min(missing, max(0, in.scaleMaxUnavailable-(unavailable-missing)))
	}
	if !in.parallel {
		p.createWanted = min(p.createWanted, 1)
	}
	create := in.ordinals.First(min(p.createWanted, slowstart.MaxPerReconcile), func(o int) bool { return taken[o] })

	// Replicas, in ordinal order: missing pods are created, finished ones deleted to be made
	// again. OrderedReady stops at the first pod that is not running and ready.
	for i, j := 0, 0; !p.halted && (i < len(replicas) || j < len(create)); {
		if j < len(create) && (i == len(replicas) || create[j] < replicas[i].ordinal) {
			o := create[j]
			j++
			place, _ := in.ordinals.Index(o)
			current := in.rollingUpdate && !in.sameRevision && place < in.partition
			p.create = append(p.create, creation{ordinal: o, current: current})
			p.halted = !in.parallel
			continue
		}
		pi := replicas[i]
		i++
		if pi.pending && pi.claimsMissing && !pi.terminating {
			p.restoreClaims = append(p.restoreClaims, pi.ordinal)
		}
		switch {
		case pi.terminating:
			p.halted = !in.parallel
		case pi.finished:
			p.delete = append(p.delete, deletion{pod: pi.pod})
			p.halted = !in.parallel
		case !pi.ready:
			p.halted = !in.parallel
		}
	}
	if !in.parallel {
		p.createWanted = len(p.create)
	}

	// Pods whose ordinal is no longer wanted (a scale-down or a reserved ordinal) go, through
	// the preDelete hook: all at once in Parallel, else the highest first and only while every
	// replica is ready.
	sort.Slice(condemned, func(i, j int) bool { return condemned[i].ordinal > condemned[j].ordinal })
	// OrderedReady deletes a removed pod that is not running, ready and available only when it
	// is the lowest removed pod that is unhealthy, as 1.8 does: with several removed pods not
	// ready, none goes.
	firstUnhealthy := -1
	for i := len(condemned) - 1; i >= 0; i-- {
		if !condemned[i].ready || condemned[i].terminating {
			firstUnhealthy = condemned[i].ordinal
			break
		}
	}
	if in.parallel || (!p.halted && len(p.create) == 0) {
		for _, pi := range condemned {
			if !in.parallel && pi.terminating {
				break
			}
			if !in.parallel && (!pi.ready || !pi.available) && pi.ordinal != firstUnhealthy {
				break
			}
			if pi.terminating {
				continue
			}
			step := lifecycle.Next(pi.hooks(), lifecycle.IntentDelete)
			switch {
			case step == (lifecycle.Step{}):
			case !step.Proceed:
				p.prepareDelete = append(p.prepareDelete, pi.pod)
			default:
				p.delete = append(p.delete, deletion{pod: pi.pod, deleteClaims: in.deleteClaimsOnScaleDown})
			}
			if !in.parallel {
				break
			}
		}
	}

	p.planUpdates(in, replicas, unavailable)
	return p
}

// planUpdates picks the replicas to update or to delete because the user asked, within the
// unavailability budget: unavailable pods cost nothing, every other one uses one unit of
// maxUnavailable. replicas are the pods on the replicas' ordinals, ascending.
func (p *plan) planUpdates(in planInput, replicas []podInfo, unavailable int) {
	var candidates []podInfo
	for _, pi := range replicas {
		if pi.terminating || pi.finished {
			continue
		}
		// While PVCs are resized, a pod at the update revision whose PVCs are smaller than the
		// templates is a candidate too, to grow them.
		claimsBehind := in.resizeClaims && !pi.claims.compatible
		switch {
		case pi.specified:
			candidates = append(candidates, pi)
		case !in.rollingUpdate || in.paused || ((in.sameRevision || pi.updated) && !claimsBehind):
		case in.unordered:
			candidates = append(candidates, pi)
		default:
			if place, _ := in.ordinals.Index(pi.ordinal); place >= in.partition {
				candidates = append(candidates, pi)
			}
		}
	}
	if in.unordered {
		candidates = unorderedCandidates(candidates, in)
	} else {
		sort.Slice(candidates, func(i, j int) bool { return candidates[i].ordinal > candidates[j].ordinal })
	}

	budget := max(1, in.maxUnavailable) - unavailable
	for _, pi := range candidates {
		if !pi.specified && in.resizeClaims && !pi.claims.completed {
			// The pod's PVCs grow first, and the pod waits until they have: only then is it
			// updated (as 1.8 does, so that a pending file system resize finishes when the pod
			// starts again).
			if !pi.claims.compatible {
				if !p.takeBudget(in, pi, &budget) {
					if in.unordered || in.parallel {
						continue
					}
					break
				}
				p.resize = append(p.resize, pi.pod)
			}
			continue
		}
		if !pi.specified && (pi.updated || in.sameRevision) {
			continue // a candidate only for its PVCs, which are done
		}
		intent := lifecycle.IntentUpdateInPlace
		switch {
		case pi.specified, pi.route == inplaceupdate.RouteRecreate:
			intent = lifecycle.IntentDelete
		case pi.route == inplaceupdate.RouteStuck:
			p.stuck = append(p.stuck, pi.pod)
			continue
		}
		step := lifecycle.Next(pi.hooks(), intent)
		if step == (lifecycle.Step{}) {
			continue // held by its hook
		}
		preparing := pi.state == appspub.LifecycleStatePreparingUpdate || pi.state == appspub.LifecycleStatePreparingDelete
		if !preparing && !p.takeBudget(in, pi, &budget) {
			if in.unordered || in.parallel {
				continue
			}
			break
		}
		switch {
		case step.Move == appspub.LifecycleStatePreparingUpdate:
			p.prepareUpdate = append(p.prepareUpdate, pi.pod)
		case step.Move == appspub.LifecycleStatePreparingDelete && pi.specified:
			p.prepareDelete = append(p.prepareDelete, pi.pod)
		case step.Move == appspub.LifecycleStatePreparingDelete:
			p.prepareRecreate = append(p.prepareRecreate, pi.pod)
		case pi.specified:
			p.delete = append(p.delete, deletion{pod: pi.pod})
		default:
			p.update = append(p.update, podwrite.Update{Pod: pi.pod, InPlace: pi.inPlace})
		}
	}
}

// takeBudget spends one unit of the unavailability budget on pi, when it is available; it
// reports false when there is none left.
func (p *plan) takeBudget(in planInput, pi podInfo, budget *int) bool {
	if pi.unavailable(in) {
		return true
	}
	if *budget <= 0 {
		return false
	}
	*budget--
	return true
}

// unorderedCandidates sorts the candidates of an unordered update by the priority strategy and
// keeps the partition: the last partition replicas in that order stay at the current revision.
// Pods the user asked to delete always stay candidates.
func unorderedCandidates(candidates []podInfo, in planInput) []podInfo {
	pods := make([]*corev1.Pod, len(candidates))
	byPod := make(map[*corev1.Pod]podInfo, len(candidates))
	for i, pi := range candidates {
		pods[i] = pi.pod
		byPod[pi.pod] = pi
	}
	podsort.ForUpdate(pods, in.priority, nil, in.minReadySeconds, in.now)
	// Replicas already updated count towards those that may update.
	updated := 0
	for _, pi := range in.pods {
		if pi.updated && !pi.terminating {
			updated++
		}
	}
	allowed := max(0, in.ordinals.Len()-in.partition-updated)
	out := make([]podInfo, 0, len(pods))
	for _, pod := range pods {
		pi := byPod[pod]
		if !pi.updated && !pi.specified {
			if allowed == 0 {
				continue
			}
			allowed--
		}
		out = append(out, pi)
	}
	return out
}
