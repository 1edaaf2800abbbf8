package daemonset

import (
	"sort"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/lifecycle"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podwrite"
)

// podInfo is what the planner knows of one live pod.
type podInfo struct {
	pod *corev1.Pod
	// updated is true when the pod is at the update revision.
	updated bool
	// available is true when the pod is ready for minReadySeconds and not in an in-place update.
	available bool
	// failed is true when the pod's phase is Failed: it will not run again.
	failed bool
	// state is the pod's lifecycle state; preDeleteHeld says whether the preDelete hook holds it.
	state         appspub.LifecycleStateType
	preDeleteHeld bool
	// route is how the pod would reach the update revision, and inPlace its in-place plan when
	// the route is inplaceupdate.RouteInPlace. They mean nothing for an updated pod.
	route   inplaceupdate.Route
	inPlace *inplaceupdate.Plan
}

// preDeleting is true when the pod waits in PreparingDelete.
func (pi podInfo) preDeleting() bool { return pi.state == appspub.LifecycleStatePreparingDelete }

func (pi podInfo) hooks() lifecycle.Pod {
	return lifecycle.Pod{State: pi.state, PreDeleteHeld: pi.preDeleteHeld, AtUpdateRevision: pi.updated}
}

// nodeInfo is what the planner knows of one node and the DaemonSet's pods on it.
type nodeInfo struct {
	name string
	placement
	// selected is true when the node matches spec.updateStrategy.rollingUpdate.selector, or
	// there is none.
	selected bool
	// gone is true when the node no longer exists and only its pods are left.
	gone bool
	// pods are the live pods on the node, oldest first; terminating counts those on their way
	// out, which hold the node until they are gone.
	pods        []podInfo
	terminating int
}

// planInput is everything a plan is made from.
type planInput struct {
	// nodes are every node that exists or holds a pod, by name.
	nodes []nodeInfo
	// rolling is true for the RollingUpdate strategy, false for OnDelete.
	rolling bool
	paused  bool
	// maxUnavailable and maxSurge are the update's bounds, already scaled to the desired number
	// of nodes; partition is how many nodes keep a pod of an old revision.
	maxUnavailable, maxSurge, partition int
	// progressive is true when the DaemonSet carries the progressive-create-pod annotation: a
	// rolling update's non-zero partition then also holds back pod creation.
	progressive bool
	// burst is the most pods one reconcile creates (burstReplicas, scaled).
	burst int
}

// plan is what one reconcile does.
type plan struct {
	// create are the nodes that get a pod of the update revision now.
	create []string
	// deferred counts nodes left for a later pass because burstReplicas is reached.
	deferred int
	// delete are pods to delete now.
	delete []*corev1.Pod
	// prepareDelete are pods to move to PreparingDelete, because the preDelete hook holds them.
	prepareDelete []*corev1.Pod
	// update are pods to update in place now, each with its plan.
	update []podwrite.Update
}

// makePlan decides a reconcile. It is pure: the same input always gives the same plan.
//
// Placement comes first: a node that should run the pod and has none gets one; pods on a node
// that must not keep them, failed pods and surplus pods go. Then a rolling update, unless it is
// paused or the strategy is OnDelete, replaces old pods within maxUnavailable (or maxSurge),
// on the nodes rollingUpdate.selector picks, leaving partition nodes at an old revision. Every
// deletion goes through the preDelete hook. With progressive creation the partition also holds
// back the pods placement would create (holdBackCreation).
func makePlan(in planInput) plan {
	var p plan
	handled := map[string]bool{}
	for _, n := range in.nodes {
		if p.manage(n, in) {
			handled[n.name] = true
		}
	}
	for _, name := range p.holdBackCreation(in) {
		delete(handled, name)
	}
	if in.rolling && !in.paused {
		p.rollingUpdate(in.nodes, handled, in)
	}
	if len(p.create) > in.burst {
		p.deferred = len(p.create) - max(in.burst, 0)
		p.create = p.create[:max(in.burst, 0)]
	}
	return p
}

// manage places pods on one node and removes those that do not belong. It returns true when it
// changes the node's pods: the rolling update then picks no pod there, and counts the node as
// one without an available pod to spare.
func (p *plan) manage(n nodeInfo, in planInput) bool {
	switch {
	case n.shouldRun && len(n.pods) == 0 && n.terminating == 0:
		p.create = append(p.create, n.name)
		return true
	case !n.shouldContinue && len(n.pods) > 0:
		for _, pi := range n.pods {
			p.remove(pi)
		}
		return true
	case len(n.pods) == 0:
		return false
	}
	changed := false
	var live []podInfo
	for _, pi := range n.pods {
		switch {
		case pi.failed:
			p.remove(pi)
			changed = true
		case pi.preDeleting() && !pi.preDeleteHeld:
			// The hook let go of a pod on its way out.
			p.delete = append(p.delete, pi.pod)
			changed = true
		default:
			live = append(live, pi)
		}
	}
	keep := keepOnNode(live, in.rolling && in.maxSurge > 0)
	for _, pi := range live {
		if !keep[pi.pod] {
			p.remove(pi)
			changed = true
		}
	}
	return changed
}

// holdBackCreation limits, under progressive creation with a rolling update's non-zero
// partition, the nodes that get a pod because they have none: at most the desired nodes, less
// those that run a pod of the update revision, less the partition (clamped to 0..desired). The
// first nodes by name get theirs; it returns the others, which wait as nodes without a pod.
// Only existing nodes count, and a node with more than one pod of a revision counts as not
// updated.
func (p *plan) holdBackCreation(in planInput) (held []string) {
	if !in.progressive || !in.rolling || in.partition == 0 || len(p.create) == 0 {
		return nil
	}
	desired, updated := 0, 0
	for _, n := range in.nodes {
		if n.gone {
			continue
		}
		if n.shouldRun {
			desired++
		}
		news, olds := 0, 0
		for _, pi := range n.pods {
			if pi.updated {
				news++
			} else {
				olds++
			}
		}
		if news == 1 && olds <= 1 {
			updated++
		}
	}
	allowed := min(max(desired-updated-min(max(in.partition, 0), desired), 0), len(p.create))
	sort.Strings(p.create)
	held = p.create[allowed:]
	p.create = p.create[:allowed:allowed]
	return held
}

// keepOnNode picks the pods a node keeps: the oldest one, or, while surging, the oldest of the
// update revision and the oldest of an old one.
func keepOnNode(pods []podInfo, surge bool) map[*corev1.Pod]bool {
	keep := map[*corev1.Pod]bool{}
	if len(pods) == 0 {
		return keep
	}
	if !surge {
		keep[pods[0].pod] = true
		return keep
	}
	var haveNew, haveOld bool
	for _, pi := range pods {
		if pi.updated && !haveNew {
			keep[pi.pod], haveNew = true, true
		}
		if !pi.updated && !haveOld {
			keep[pi.pod], haveOld = true, true
		}
	}
	return keep
}

// remove deletes a pod, through the preDelete hook when it holds the pod.
func (p *plan) remove(pi podInfo) {
	step := lifecycle.Next(pi.hooks(), lifecycle.IntentDelete)
	switch {
	case step.Proceed:
		p.delete = append(p.delete, pi.pod)
	case step.Move == appspub.LifecycleStatePreparingDelete:
		p.prepareDelete = append(p.prepareDelete, pi.pod)
	}
}

// onNode is a node's pods for the rolling update: its pod of the update revision and its pod of
// an old one, either nil. ok is false when the node has more than one of a kind.
type onNode struct {
	name                string
	selected, shouldRun bool
	newPod, oldPod      *podInfo
	ok                  bool
	// busy is true when the manage pass changes the node's pods in this plan; hadPods says it
	// had any.
	busy, hadPods bool
}

func (o onNode) oldGone() bool { return o.oldPod == nil || o.oldPod.preDeleting() }

// rollingUpdate replaces old pods on the nodes the manage pass left alone. The nodes it is
// changing (busy) take no part but count: a node that is getting a pod, or losing one, has no
// available pod to spare.
func (p *plan) rollingUpdate(nodes []nodeInfo, busy map[string]bool, in planInput) {
	var all []onNode
	for _, n := range nodes {
		if !n.shouldRun && len(n.pods) == 0 {
			continue // a node with nothing to do with this DaemonSet
		}
		o := onNode{name: n.name, selected: n.selected, shouldRun: n.shouldRun, ok: true, busy: busy[n.name], hadPods: len(n.pods) > 0}
		for i := range n.pods {
			pi := &n.pods[i]
			switch {
			case pi.updated && o.newPod == nil:
				o.newPod = pi
			case !pi.updated && o.oldPod == nil:
				o.oldPod = pi
			default:
				o.ok = false
			}
		}
		all = append(all, o)
	}
	toUpdate := filterToUpdate(all, in.partition)
	if in.maxSurge > 0 {
		p.surge(toUpdate, in)
		return
	}
	p.replace(toUpdate, in)
}

// filterToUpdate keeps the nodes a rolling update may touch: the nodes already updated or
// between pods first, then those with an old pod that rollingUpdate.selector picks, in reverse
// name order, so that all but partition nodes are updated.
func filterToUpdate(all []onNode, partition int) []onNode {
	var updated, candidates []onNode
	for _, o := range all {
		switch {
		case o.busy || !o.ok || o.newPod != nil || o.oldGone():
			updated = append(updated, o)
		case o.selected:
			candidates = append(candidates, o)
		}
	}
	sort.SliceStable(candidates, func(i, j int) bool { return candidates[i].name > candidates[j].name })
	sorted := append(updated, candidates...)
	maxUpdate := len(all) - partition
	if maxUpdate <= 0 {
		return nil
	}
	if maxUpdate < len(sorted) {
		sorted = sorted[:maxUpdate]
	}
	return sorted
}

// replace is the update without surge: old pods are deleted (or updated in place) while no more
// than maxUnavailable of the nodes are without an available pod. Old pods that are not available
// cost nothing and go first.
func (p *plan) replace(nodes []onNode, in planInput) {
	unavailable := 0
	var free, candidates []*podInfo
	for _, o := range nodes {
		switch {
		case o.busy || !o.ok:
			unavailable++
		case o.oldGone() && o.newPod == nil, !o.oldGone() && o.newPod != nil:
			unavailable++
		case o.newPod != nil:
			if !o.newPod.available || o.newPod.preDeleting() {
				unavailable++
			}
		case !o.oldPod.available:
			free = append(free, o.oldPod)
		default:
			candidates = append(candidates, o.oldPod)
		}
	}
	budget := min(max(0, in.maxUnavailable-unavailable), len(candidates))
	for _, pi := range append(free, candidates[:budget]...) {
		if pi.route == inplaceupdate.RouteInPlace {
			p.update = append(p.update, podwrite.Update{Pod: pi.pod, InPlace: pi.inPlace})
			continue
		}
		p.remove(*pi)
	}
}

// surge is the update with maxSurge: a node with an old pod first gets a new pod next to it (at
// once when the old pod is not available, else for up to maxSurge nodes at a time), and the old
// pod is deleted once the new one is available.
func (p *plan) surge(nodes []onNode, in planInput) {
	surging := 0
	var free, candidates []string
	for _, o := range nodes {
		switch {
		case o.busy && o.hadPods, !o.ok:
			surging++
		case o.busy, o.oldGone():
		case o.newPod == nil && !o.shouldRun:
			// No new pod may go on this node; its old pod stays while the node keeps it.
		case o.newPod == nil:
			if !o.oldPod.available {
				free = append(free, o.name)
			} else {
				candidates = append(candidates, o.name)
			}
		case !o.newPod.available || o.newPod.preDeleting():
			surging++
		default:
			p.remove(*o.oldPod)
		}
	}
	budget := min(max(0, in.maxSurge-surging), len(candidates))
	p.create = append(p.create, free...)
	p.create = append(p.create, candidates[:budget]...)
}
