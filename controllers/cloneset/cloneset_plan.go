package cloneset

import (
	"cmp"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/lifecycle"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podsort"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podwrite"
)

// podInfo is what the planner knows of one pod.
type podInfo struct {
	pod *corev1.Pod
	// updated is true when the pod is at the update revision.
	updated bool
	// state is the pod's lifecycle state.
	state appspub.LifecycleStateType
	// specified is true when the user asked for this pod to go (podsToDelete or the
	// apps.kruise.io/specified-delete label), or the CloneSet marked it for a recreate.
	specified bool
	// recreate is true when the CloneSet marked the pod for a recreate update that the preDelete
	// hook held (the apps.kruise.io/specified-delete label with the value recreateMark).
	recreate bool
	// available is true when the pod is ready for minReadySeconds and not in an in-place update.
	available bool
	// preDeleteHooked and inPlaceHooked say whether the preDelete or inPlaceUpdate hook holds
	// the pod.
	preDeleteHooked, inPlaceHooked bool
	// route is how the pod would reach the update revision, and inPlace its in-place plan when
	// the route is inplaceupdate.RouteInPlace. For an updated pod they are how it would go back
	// to the current revision, set only while partition rollback is on.
	route   inplaceupdate.Route
	inPlace *inplaceupdate.Plan
	// freshClaims is true when the revision the pod moves to has other claim templates
	// (RecreatePodWhenChangeVCTInCloneSetGate): the pod is recreated, and its claims go with it
	// so that its replacement gets new ones.
	freshClaims bool
}

// hooks is what the lifecycle transition needs of the pod for a deletion or an update; the
// refresh pass, which moves finished hooks on, reads the rest from the pod (lifecycle.Observe).
func (pi podInfo) hooks() lifecycle.Pod {
	return lifecycle.Pod{State: pi.state, PreDeleteHeld: pi.preDeleteHooked, InPlaceHeld: pi.inPlaceHooked, AtUpdateRevision: pi.updated}
}

// planInput is everything a plan is made from.
type planInput struct {
	replicas int
	// partition is how many pods stay at the current revision.
	partition int
	// maxUnavailable and maxSurge are the update's bounds, already scaled to replicas.
	maxUnavailable, maxSurge int
	// scaleMaxUnavailable bounds how many pods may be unavailable while pods are created or
	// specifically deleted; negative means unbounded.
	scaleMaxUnavailable int
	paused              bool
	// sameRevision is true when the current and update revisions are the same.
	sameRevision bool
	// excludePreparingDelete stops pods in PreparingDelete counting towards replicas.
	excludePreparingDelete bool
	// preparingUpdateAsUpdate counts pods in PreparingUpdate as updated while scaling, so that
	// new pods and scale-downs keep the partition as if those pods had updated already (the
	// PreparingUpdateAsUpdate gate).
	preparingUpdateAsUpdate bool
	// rollback moves updated pods back to the current revision when more pods are updated than
	// replicas minus the partition, e.g. after the partition grew (the CloneSetPartitionRollback
	// gate).
	rollback bool
	// reuseClaims is true when a recreated pod's replacement takes its instance ID, and so its
	// PVCs: the CloneSet has volumeClaimTemplates and does not set scaleStrategy.disablePVCReuse.
	// The replacement can then only be created once the old pod is gone.
	reuseClaims bool

	pods []podInfo

	priority        *appspub.UpdatePriorityStrategy
	scatter         []podsort.ScatterTerm
	minReadySeconds int32
	now             time.Time
}

// plan is what one reconcile does.
type plan struct {
	// createUpdated and createCurrent are how many pods to create at the update and the current
	// revision.
	createUpdated, createCurrent int
	// delete are pods to delete now; deleteClaims says whether their PVCs go too (not for a
	// recreate whose replacement reuses them).
	delete []deletion
	// prepareDelete are pods to move to PreparingDelete, because the preDelete hook holds them.
	prepareDelete []*corev1.Pod
	// restore are pods in PreparingDelete to bring back to Normal, because replicas went up.
	restore []*corev1.Pod
	// update are pods to move to the update revision now, in place or by recreating them, as
	// their route says.
	update []podwrite.Update
	// prepareUpdate are pods to move to PreparingUpdate, because the inPlaceUpdate hook holds
	// their in-place update.
	prepareUpdate []*corev1.Pod
	// prepareRecreate are pods whose recreate the preDelete hook holds: they are marked for
	// deletion (the specified-delete label, so that later passes treat them as chosen pods) and
	// moved to PreparingDelete.
	prepareRecreate []*corev1.Pod
	// stuck are pods an InPlaceOnly update cannot move in place; none of them is touched.
	stuck []*corev1.Pod
	// dropClaims are pods of update whose claims go once the pod is deleted (freshClaims).
	dropClaims []*corev1.Pod
	// rollback says that update moves pods back to the current revision.
	rollback bool
	// blockedUpdates counts pods left for a later pass because the unavailability budget is spent.
	blockedUpdates int
	// scaleUpLimit, when set, is how many pods scaleStrategy.maxUnavailable lets a scale-up
	// create, fewer than it needs; apply reports it as 1.8's ScaleUpLimited event.
	scaleUpLimit *int
}

type deletion struct {
	pod          *corev1.Pod
	deleteClaims bool
}

// makePlan decides a reconcile. It is pure: the same input always gives the same plan.
func makePlan(in planInput) plan {
	var p plan
	var leaving, specified, recreating, active []podInfo
	for _, pi := range in.pods {
		switch {
		case pi.state == appspub.LifecycleStatePreparingDelete && !pi.specified:
			leaving = append(leaving, pi)
		case pi.recreate && in.reuseClaims:
			recreating = append(recreating, pi)
		case pi.specified:
			specified = append(specified, pi)
		default:
			active = append(active, pi)
		}
	}

	// A recreate whose replacement reuses the pod's claims keeps the pod's place until the pod
	// is gone: it is deleted, without its claims, once the preDelete hook lets go, and the
	// replacement is created after that on the same instance ID. The update chose it, so it is
	// not an old pod any more, and it spends no scaling budget.
	for _, pi := range recreating {
		step := lifecycle.Next(pi.hooks(), lifecycle.IntentDelete)
		switch {
		case step.Proceed:
			p.delete = append(p.delete, deletion{pod: pi.pod, deleteClaims: pi.freshClaims})
		case step.Move != "":
			p.prepareDelete = append(p.prepareDelete, pi.pod)
		}
	}

	// Pods the user asked to delete go first, through the preDelete hook when it holds them; so
	// do recreates whose replacement does not take their claims (there are none, or the
	// CloneSet does not reuse them), which go with their claims.
	scaleBudget := scaleBudget(in, active)
	for _, pi := range specified {
		step := lifecycle.Next(pi.hooks(), lifecycle.IntentDelete)
		if step == (lifecycle.Step{}) {
			continue // held in PreparingDelete
		}
		if pi.available {
			if scaleBudget == 0 {
				continue
			}
			scaleBudget--
		}
		if !step.Proceed {
			p.prepareDelete = append(p.prepareDelete, pi.pod)
			continue
		}
		p.delete = append(p.delete, deletion{pod: pi.pod, deleteClaims: true})
	}

	var old, upd []podInfo
	for _, pi := range active {
		if pi.updated {
			upd = append(upd, pi)
		} else {
			old = append(old, pi)
		}
	}
	needUpdate, needRollback := updateCounts(in, len(old), len(upd))
	surge := 0
	if !in.paused {
		surge = min(in.maxSurge, needUpdate+needRollback)
	}
	target := in.replicas + surge

	// Scaling up brings pods in PreparingDelete back before it creates new ones.
	missing := target - len(active) - len(recreating)
	for _, pi := range leaving {
		if missing <= 0 {
			break
		}
		p.restore = append(p.restore, pi.pod)
		missing--
	}
	stillLeaving := leaving[len(p.restore):]
	// Pods in PreparingDelete are already on their way out, so they never make a scale-down
	// delete more; unless the CloneSet excludes them, they do hold back replacements. A pod
	// being recreated onto its own claims holds its place in any case: a replacement beside it
	// would need a new instance ID, and new claims.
	kept := len(active) + len(p.restore) + len(recreating)
	counted := kept
	if !in.excludePreparingDelete {
		counted += len(stillLeaving)
	}
	// Pods the user asked to delete (and recreates, which are asked the same way) count until
	// they are gone, as in 1.8: their replacements are created after them, not beside them.
	// With the exclude label, those held in PreparingDelete do not count.
	for _, pi := range specified {
		if !(in.excludePreparingDelete && pi.state == appspub.LifecycleStatePreparingDelete) {
			counted++
		}
	}

	// Pods in PreparingDelete that the hook released are deleted.
	for _, pi := range stillLeaving {
		if lifecycle.Next(pi.hooks(), lifecycle.IntentDelete).Proceed {
			p.delete = append(p.delete, deletion{pod: pi.pod, deleteClaims: true})
		}
	}

	switch {
	case target > counted:
		n := target - counted
		if in.scaleMaxUnavailable >= 0 && n > scaleBudget {
			n = scaleBudget
			limit := scaleBudget
			p.scaleUpLimit = &limit
		}
		// New pods keep the partition: as many as it lacks go to the current revision.
		current := 0
		if !in.sameRevision {
			current = min(n, max(0, in.partition-oldForScaling(in, old)))
		}
		p.createCurrent = current
		p.createUpdated = n - current
	case target < kept:
		diff := target - kept
		for _, pi := range scaleDownOrder(old, upd, in) {
			if diff == 0 {
				break
			}
			diff++
			if !lifecycle.Next(pi.hooks(), lifecycle.IntentDelete).Proceed {
				p.prepareDelete = append(p.prepareDelete, pi.pod)
				continue
			}
			p.delete = append(p.delete, deletion{pod: pi.pod, deleteClaims: true})
		}
		return p
	}

	switch {
	case in.paused:
	case needRollback > 0:
		p.rollback = true
		p.planUpdates(upd, needRollback, active, in)
	case needUpdate > 0:
		p.planUpdates(old, needUpdate, active, in)
	}
	return p
}

// updateCounts is how many old pods to update and how many updated pods to roll back to the
// current revision. Old pods beyond the partition are updated. With partition rollback, when
// fewer old pods are left than the partition and more pods are updated than replicas minus the
// partition, as many updated pods go back as both counts allow.
func updateCounts(in planInput, old, upd int) (update, rollback int) {
	if in.sameRevision {
		return 0, 0
	}
	oldDiff, updDiff := old-in.partition, upd-(in.replicas-in.partition)
	if in.rollback && oldDiff < 0 && updDiff > 0 {
		return 0, min(-oldDiff, updDiff)
	}
	return max(0, oldDiff), 0
}

// preparingRank orders pods in PreparingUpdate before the others.
func preparingRank(pi podInfo) int {
	if pi.state == appspub.LifecycleStatePreparingUpdate {
		return 0
	}
	return 1
}

// oldForScaling is how many of the old pods count as old while scaling: all of them, or, with
// preparingUpdateAsUpdate, those not in PreparingUpdate.
func oldForScaling(in planInput, old []podInfo) int {
	if !in.preparingUpdateAsUpdate {
		return len(old)
	}
	n := 0
	for _, pi := range old {
		if pi.state != appspub.LifecycleStatePreparingUpdate {
			n++
		}
	}
	return n
}

// scaleBudget is how many more pods may become unavailable through scaling, or a large number
// when scaleStrategy.maxUnavailable is not set.
func scaleBudget(in planInput, active []podInfo) int {
	if in.scaleMaxUnavailable < 0 {
		return len(in.pods) + in.replicas + in.maxSurge + 1
	}
	unavailable := 0
	for _, pi := range active {
		if !pi.available {
			unavailable++
		}
	}
	return max(0, in.scaleMaxUnavailable-unavailable)
}

// scaleDownOrder lists the pods to remove first: those of a revision that has more pods than it
// should (old pods beyond the partition, or updated pods beyond replicas minus the partition),
// then the rest, each group in deletion order.
func scaleDownOrder(old, upd []podInfo, in planInput) []podInfo {
	oldSurplus := oldForScaling(in, old) - in.partition
	if in.sameRevision {
		oldSurplus = len(old)
	}
	sorted := func(pis []podInfo) []podInfo {
		pods := make([]*corev1.Pod, len(pis))
		byPod := make(map[*corev1.Pod]podInfo, len(pis))
		for i, pi := range pis {
			pods[i] = pi.pod
			byPod[pi.pod] = pi
		}
		podsort.ForDeletion(pods)
		out := make([]podInfo, len(pods))
		for i, p := range pods {
			out[i] = byPod[p]
		}
		return out
	}
	o, u := sorted(old), sorted(upd)
	if oldSurplus > 0 {
		n := min(oldSurplus, len(o))
		return append(append(append([]podInfo{}, o[:n]...), u...), o[n:]...)
	}
	return append(append([]podInfo{}, u...), o...)
}

// planUpdates picks the pods to move now, needUpdate of old (the old pods, or the updated ones
// for a rollback) along their routes: unavailable pods first, since moving them costs nothing,
// then others while the availability budget allows.
func (p *plan) planUpdates(old []podInfo, needUpdate int, active []podInfo, in planInput) {
	available := 0
	for _, pi := range active {
		if pi.available {
			available++
		}
	}
	maxUnavailable := in.maxUnavailable
	if maxUnavailable < 1 && in.maxSurge < 1 {
		maxUnavailable = 1
	}
	// Pods created by this plan are not available yet, and a pod being deleted by it is gone.
	for _, d := range p.delete {
		for _, pi := range active {
			if pi.pod == d.pod && pi.available {
				available--
			}
		}
	}
	budget := available - (in.replicas - maxUnavailable)

	pods := make([]*corev1.Pod, len(old))
	byPod := make(map[*corev1.Pod]podInfo, len(old))
	for i, pi := range old {
		pods[i] = pi.pod
		byPod[pi.pod] = pi
	}
	podsort.ForUpdate(pods, in.priority, in.scatter, in.minReadySeconds, in.now)
	// Pods already in PreparingUpdate go first, as in 1.8: one the hook released finishes its
	// update before another pod is moved to PreparingUpdate in its place.
	slices.SortStableFunc(pods, func(a, b *corev1.Pod) int {
		return cmp.Compare(preparingRank(byPod[a]), preparingRank(byPod[b]))
	})
	for _, pod := range pods {
		if needUpdate == 0 {
			break
		}
		pi := byPod[pod]
		if pi.route == inplaceupdate.RouteStuck {
			// It keeps its place in the update, so the partition still holds, but nothing
			// is done to it.
			p.stuck = append(p.stuck, pod)
			needUpdate--
			continue
		}
		intent := lifecycle.IntentUpdateInPlace
		if pi.route == inplaceupdate.RouteRecreate {
			intent = lifecycle.IntentDelete
		}
		step := lifecycle.Next(pi.hooks(), intent)
		if step == (lifecycle.Step{}) {
			needUpdate-- // still held by its hook
			continue
		}
		// A pod already in PreparingUpdate paid for its unavailability when it went there.
		if pi.available && pi.state != appspub.LifecycleStatePreparingUpdate {
			if budget <= 0 {
				p.blockedUpdates++
				continue
			}
			budget--
		}
		switch {
		case step.Move == appspub.LifecycleStatePreparingUpdate:
			p.prepareUpdate = append(p.prepareUpdate, pod)
		case step.Move == appspub.LifecycleStatePreparingDelete:
			p.prepareRecreate = append(p.prepareRecreate, pod)
		default:
			p.update = append(p.update, podwrite.Update{Pod: pod, InPlace: pi.inPlace})
			if pi.freshClaims {
				p.dropClaims = append(p.dropClaims, pod)
			}
		}
		needUpdate--
	}
}
