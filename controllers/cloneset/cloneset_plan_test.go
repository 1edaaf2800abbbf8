package cloneset

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/podsort"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

var planNow = time.Unix(100000, 0)

// pods makes n pod infos named prefix-0..n-1, ready and available, at the given revision.
func pods(prefix string, n int, updated bool, opts ...func(*podInfo)) []podInfo {
	var out []podInfo
	for i := 0; i < n; i++ {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i), CreationTimestamp: metav1.NewTime(planNow.Add(-time.Duration(100-i) * time.Minute))}}
		p.Spec.NodeName = "n"
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(planNow.Add(-time.Hour))}}
		pi := podInfo{pod: p, updated: updated, state: appspub.LifecycleStateNormal, available: true}
		for _, o := range opts {
			o(&pi)
		}
		out = append(out, pi)
	}
	return out
}

func unavailable(pi *podInfo) {
	pi.available = false
	pi.pod.Status.Conditions[0].Status = corev1.ConditionFalse
}
func specified(pi *podInfo)       { pi.specified = true }
func preDeleteHooked(pi *podInfo) { pi.preDeleteHooked = true }
func preparingDelete(pi *podInfo) { pi.state = appspub.LifecycleStatePreparingDelete }
func inPlaceHooked(pi *podInfo)   { pi.inPlaceHooked = true }
func preparingUpdate(pi *podInfo) { pi.state = appspub.LifecycleStatePreparingUpdate }

// inPlace gives the pod the in-place route, with a plan to revision rev.
func inPlace(rev string) func(*podInfo) {
	return func(pi *podInfo) {
		pi.route, pi.inPlace = inplaceupdate.RouteInPlace, &inplaceupdate.Plan{Revision: rev}
	}
}
func stuck(pi *podInfo) { pi.route = inplaceupdate.RouteStuck }

// freshClaims is a pod whose claim templates changed: it is recreated with new claims.
func freshClaims(pi *podInfo) {
	pi.route, pi.inPlace, pi.freshClaims = inplaceupdate.RouteRecreate, nil, true
}

// markedRecreate is a pod the CloneSet marked for a recreate the preDelete hook holds.
func markedRecreate(pi *podInfo) { pi.specified, pi.recreate = true, true }
func cost(c string) func(*podInfo) {
	return func(pi *podInfo) { pi.pod.Annotations = map[string]string{podsort.DeletionCostAnnotation: c} }
}

func join(groups ...[]podInfo) []podInfo {
	var out []podInfo
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// summary is a plan in names, for readable diffs.
type summary struct {
	CreateUpdated, CreateCurrent int
	Delete, KeepClaims           []string
	PrepareDelete, Restore       []string
	// Update are in-place updates, as "pod to revision"; Recreate are pods recreated now.
	Update, Recreate       []string
	PrepareUpdate          []string
	PrepareRecreate, Stuck []string
	Blocked                int
	// DropClaims are recreated pods whose claims go with them.
	DropClaims []string
	// ScaleUpLimit is how many pods a scale-up held back by scaleStrategy.maxUnavailable may
	// create; nil when nothing held it back.
	ScaleUpLimit *int
}

func summarize(p plan) summary {
	s := summary{CreateUpdated: p.createUpdated, CreateCurrent: p.createCurrent, Blocked: p.blockedUpdates, ScaleUpLimit: p.scaleUpLimit}
	for _, d := range p.delete {
		s.Delete = append(s.Delete, d.pod.Name)
		if !d.deleteClaims {
			s.KeepClaims = append(s.KeepClaims, d.pod.Name)
		}
	}
	add := func(dst *[]string, ps []*corev1.Pod) {
		for _, p := range ps {
			*dst = append(*dst, p.Name)
		}
	}
	add(&s.PrepareDelete, p.prepareDelete)
	add(&s.Restore, p.restore)
	for _, u := range p.update {
		if u.InPlace != nil {
			s.Update = append(s.Update, u.Pod.Name+" to "+u.InPlace.Revision)
		} else {
			s.Recreate = append(s.Recreate, u.Pod.Name)
		}
	}
	add(&s.PrepareUpdate, p.prepareUpdate)
	add(&s.PrepareRecreate, p.prepareRecreate)
	add(&s.Stuck, p.stuck)
	add(&s.DropClaims, p.dropClaims)
	return s
}

func TestMakePlan(t *testing.T) {
	base := planInput{maxUnavailable: 1, scaleMaxUnavailable: -1, sameRevision: true, now: planNow}
	with := func(f func(*planInput)) planInput {
		in := base
		f(&in)
		return in
	}
	type tcase struct {
		in   planInput
		want summary
	}
	tests := map[string]tcase{
		"scaling from nothing creates every replica at the update revision": {
			in:   with(func(in *planInput) { in.replicas = 3 }),
			want: summary{CreateUpdated: 3},
		},
		"a CloneSet at its replicas does nothing": {
			in:   with(func(in *planInput) { in.replicas = 2; in.pods = pods("u", 2, true) }),
			want: summary{},
		},
		"scaling down deletes the cheapest pods to lose, not-ready first": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.pods = join(pods("a", 2, true), pods("b", 1, true, unavailable))
			}),
			want: summary{Delete: []string{"b-0"}},
		},
		"scaling down honours pod-deletion-cost": {
			in: with(func(in *planInput) {
				in.replicas = 1
				in.pods = join(pods("keep", 1, true, cost("100")), pods("cheap", 1, true, cost("-100")))
			}),
			want: summary{Delete: []string{"cheap-0"}},
		},
		"scaling down during an update removes old pods beyond the partition first": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.sameRevision = false
				in.pods = join(pods("old", 2, false), pods("new", 1, true))
			}),
			want: summary{Delete: []string{"old-1"}},
		},
		"the preDelete hook moves a pod to PreparingDelete instead of deleting it": {
			in: with(func(in *planInput) {
				in.replicas = 1
				in.pods = join(pods("a", 1, true), pods("held", 1, true, preDeleteHooked, cost("-1")))
			}),
			want: summary{PrepareDelete: []string{"held-0"}},
		},
		"a pod held in PreparingDelete still counts towards replicas and is kept": {
			in: with(func(in *planInput) {
				in.replicas = 1
				in.pods = join(pods("a", 1, true), pods("held", 1, true, preDeleteHooked, preparingDelete))
			}),
			want: summary{},
		},
		"a pod in PreparingDelete released by its hook is deleted": {
			in: with(func(in *planInput) {
				in.replicas = 1
				in.pods = join(pods("a", 1, true), pods("released", 1, true, preparingDelete))
			}),
			want: summary{Delete: []string{"released-0"}},
		},
		"scaling back up restores a pod in PreparingDelete instead of creating one": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.pods = join(pods("a", 1, true), pods("held", 1, true, preDeleteHooked, preparingDelete))
			}),
			want: summary{Restore: []string{"held-0"}},
		},
		"a specified pod is deleted first, and replaced once it is gone": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.pods = join(pods("a", 1, true), pods("chosen", 1, true, specified))
			}),
			want: summary{Delete: []string{"chosen-0"}},
		},
		"a specified pod held by the preDelete hook still counts: no replacement beside it": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.pods = join(pods("a", 1, true), pods("chosen", 1, true, specified, preparingDelete, preDeleteHooked))
			}),
			want: summary{},
		},
		"with the exclude-preparing-delete label, a held specified pod does not count and is replaced beside it": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.excludePreparingDelete = true
				in.pods = join(pods("a", 1, true), pods("chosen", 1, true, specified, preparingDelete, preDeleteHooked))
			}),
			want: summary{CreateUpdated: 1},
		},
		"scaleStrategy.maxUnavailable limits creations while pods are unavailable": {
			in: with(func(in *planInput) {
				in.replicas = 5
				in.scaleMaxUnavailable = 2
				in.pods = pods("starting", 1, true, unavailable)
			}),
			want: summary{CreateUpdated: 1, ScaleUpLimit: ptr.To(1)},
		},
		"a scale-up within scaleStrategy.maxUnavailable is not reported as limited": {
			in: with(func(in *planInput) {
				in.replicas = 3
				in.scaleMaxUnavailable = 2
				in.pods = pods("ready", 1, true)
			}),
			want: summary{CreateUpdated: 2},
		},
		"an update within maxUnavailable updates that many pods": {
			in: with(func(in *planInput) {
				in.replicas = 5
				in.sameRevision = false
				in.maxUnavailable = 2
				in.pods = pods("old", 5, false)
			}),
			want: summary{Recreate: []string{"old-0", "old-1"}, Blocked: 3},
		},
		"an update goes first to pods that are already unavailable, at no cost": {
			in: with(func(in *planInput) {
				in.replicas = 3
				in.sameRevision = false
				in.pods = join(pods("ok", 2, false), pods("down", 1, false, unavailable))
			}),
			want: summary{Recreate: []string{"down-0"}, Blocked: 2},
		},
		"an update stops while updated pods are still unavailable": {
			in: with(func(in *planInput) {
				in.replicas = 3
				in.sameRevision = false
				in.pods = join(pods("old", 2, false), pods("new", 1, true, unavailable))
			}),
			want: summary{Blocked: 2},
		},
		"partition keeps that many pods at the current revision": {
			in: with(func(in *planInput) {
				in.replicas = 4
				in.sameRevision = false
				in.partition = 3
				in.maxUnavailable = 4
				in.pods = pods("old", 4, false)
			}),
			want: summary{Recreate: []string{"old-0"}},
		},
		"scaling up under a partition creates the missing old pods at the current revision": {
			in: with(func(in *planInput) {
				in.replicas = 4
				in.sameRevision = false
				in.partition = 3
				in.pods = join(pods("old", 1, false), pods("new", 1, true))
			}),
			want: summary{CreateCurrent: 2},
		},
		"paused updates nothing but still scales": {
			in: with(func(in *planInput) {
				in.replicas = 3
				in.sameRevision = false
				in.paused = true
				in.pods = pods("old", 2, false)
			}),
			want: summary{CreateUpdated: 1},
		},
		"maxSurge creates extra updated pods before old ones go": {
			in: with(func(in *planInput) {
				in.replicas = 4
				in.sameRevision = false
				in.maxUnavailable = 0
				in.maxSurge = 2
				in.pods = pods("old", 4, false)
			}),
			want: summary{CreateUpdated: 2, Blocked: 4},
		},
		"with surge pods available, old pods are replaced within the budget": {
			in: with(func(in *planInput) {
				in.replicas = 4
				in.sameRevision = false
				in.maxUnavailable = 0
				in.maxSurge = 2
				in.pods = join(pods("old", 4, false), pods("new", 2, true))
			}),
			want: summary{Recreate: []string{"old-0", "old-1"}, Blocked: 2},
		},
		"when no old pod is left the surge pods are removed": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.sameRevision = false
				in.maxSurge = 1
				in.pods = pods("new", 3, true)
			}),
			want: summary{Delete: []string{"new-2"}},
		},
		"the inPlaceUpdate hook moves a pod to update in place to PreparingUpdate first": {
			in: with(func(in *planInput) {
				in.replicas = 1
				in.sameRevision = false
				in.pods = pods("old", 1, false, inPlace("r2"), inPlaceHooked)
			}),
			want: summary{PrepareUpdate: []string{"old-0"}},
		},
		"a pod whose revision can go in place is updated in place with its revision's plan": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.sameRevision = false
				in.maxUnavailable = 2
				in.pods = pods("old", 2, false, inPlace("r2"))
			}),
			want: summary{Update: []string{"old-0 to r2", "old-1 to r2"}},
		},
		"a pod whose revision cannot go in place is recreated": {
			in: with(func(in *planInput) {
				in.replicas = 1
				in.sameRevision = false
				in.pods = pods("old", 1, false)
			}),
			want: summary{Recreate: []string{"old-0"}},
		},
		"the inPlaceUpdate hook does not hold a pod that is recreated": {
			in: with(func(in *planInput) {
				in.replicas = 1
				in.sameRevision = false
				in.pods = pods("old", 1, false, inPlaceHooked)
			}),
			want: summary{Recreate: []string{"old-0"}},
		},
		"a pod held in PreparingUpdate whose update became a recreate is recreated": {
			in: with(func(in *planInput) {
				in.replicas = 1
				in.sameRevision = false
				in.pods = pods("old", 1, false, inPlaceHooked, preparingUpdate)
			}),
			want: summary{Recreate: []string{"old-0"}},
		},
		"the preDelete hook holds a recreate: the pod is marked and moved to PreparingDelete": {
			in: with(func(in *planInput) {
				in.replicas = 1
				in.sameRevision = false
				in.pods = pods("old", 1, false, preDeleteHooked)
			}),
			want: summary{PrepareRecreate: []string{"old-0"}},
		},
		"the preDelete hook holds a recreate within the unavailability budget": {
			in: with(func(in *planInput) {
				in.replicas = 3
				in.sameRevision = false
				in.pods = pods("old", 3, false, preDeleteHooked)
			}),
			want: summary{PrepareRecreate: []string{"old-0"}, Blocked: 2},
		},
		"the preDelete hook does not hold an in-place update": {
			in: with(func(in *planInput) {
				in.replicas = 1
				in.sameRevision = false
				in.pods = pods("old", 1, false, inPlace("r2"), preDeleteHooked)
			}),
			want: summary{Update: []string{"old-0 to r2"}},
		},
		"a pod held in PreparingUpdate waits and keeps its place in the update": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.sameRevision = false
				in.partition = 1
				in.maxUnavailable = 2
				in.pods = join(pods("held", 1, false, inPlace("r2"), inPlaceHooked, preparingUpdate, cost("-1")), pods("old", 1, false, inPlace("r2")))
			}),
			want: summary{},
		},
		"a pod in PreparingUpdate that its hook let go is updated in place": {
			in: with(func(in *planInput) {
				in.replicas = 1
				in.sameRevision = false
				in.pods = pods("old", 1, false, inPlace("r2"), preparingUpdate)
			}),
			want: summary{Update: []string{"old-0 to r2"}},
		},
		"without claims to reuse, a recreate held in PreparingDelete waits as a chosen pod, and is replaced once it is gone": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.sameRevision = false
				in.pods = join(pods("new", 1, true), pods("old", 1, false, markedRecreate, preparingDelete, preDeleteHooked))
			}),
			want: summary{},
		},
		"without claims to reuse, a recreate the preDelete hook let go is deleted with its claims, its replacement having its own": {
			in: with(func(in *planInput) {
				in.replicas = 1
				in.sameRevision = false
				in.pods = join(pods("new", 1, true), pods("old", 1, false, markedRecreate, preparingDelete))
			}),
			want: summary{Delete: []string{"old-0"}},
		},
		"with claims to reuse, a recreate held in PreparingDelete keeps its place: no replacement is created beside it": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.sameRevision = false
				in.reuseClaims = true
				in.pods = join(pods("new", 1, true), pods("old", 1, false, markedRecreate, preparingDelete, preDeleteHooked))
			}),
			want: summary{},
		},
		"with claims to reuse, a recreate the preDelete hook let go is deleted without its claims and replaced only once it is gone": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.sameRevision = false
				in.reuseClaims = true
				in.pods = join(pods("new", 1, true), pods("old", 1, false, markedRecreate, preparingDelete))
			}),
			want: summary{Delete: []string{"old-0"}, KeepClaims: []string{"old-0"}},
		},
		"with claims to reuse, a held recreate keeps its place even when pods in PreparingDelete do not count towards replicas": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.sameRevision = false
				in.reuseClaims = true
				in.excludePreparingDelete = true
				in.pods = join(pods("new", 1, true), pods("old", 1, false, markedRecreate, preparingDelete, preDeleteHooked))
			}),
			want: summary{},
		},
		"with claims to reuse, a pod marked for a recreate but not yet in PreparingDelete is moved there": {
			in: with(func(in *planInput) {
				in.replicas = 1
				in.sameRevision = false
				in.reuseClaims = true
				in.pods = pods("old", 1, false, markedRecreate, preDeleteHooked)
			}),
			want: summary{PrepareDelete: []string{"old-0"}},
		},
		"with claims to reuse, a held recreate spends the update's budget, so no other pod updates": {
			in: with(func(in *planInput) {
				in.replicas = 3
				in.sameRevision = false
				in.reuseClaims = true
				in.pods = join(pods("old", 2, false), pods("held", 1, false, markedRecreate, preparingDelete, preDeleteHooked))
			}),
			want: summary{Blocked: 2},
		},
		"with claims to reuse, scaling up during a held recreate creates only the pods it lacks besides the held one": {
			in: with(func(in *planInput) {
				in.replicas = 3
				in.sameRevision = false
				in.reuseClaims = true
				in.pods = join(pods("new", 1, true), pods("held", 1, false, markedRecreate, preparingDelete, preDeleteHooked))
			}),
			want: summary{CreateUpdated: 1},
		},
		"with claims to reuse, a held recreate takes its place before a pod in PreparingDelete is restored": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.sameRevision = false
				in.reuseClaims = true
				in.pods = join(pods("a", 1, true), pods("held", 1, false, markedRecreate, preparingDelete, preDeleteHooked), pods("leaving", 1, true, preDeleteHooked, preparingDelete))
			}),
			want: summary{},
		},
		"a pod the user asked to delete loses its claims, also when recreates reuse claims": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.reuseClaims = true
				in.pods = join(pods("a", 1, true), pods("chosen", 1, true, specified))
			}),
			want: summary{Delete: []string{"chosen-0"}},
		},
		"an InPlaceOnly change that cannot go in place leaves the pod and reports it": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.sameRevision = false
				in.maxUnavailable = 2
				in.pods = pods("old", 2, false, stuck)
			}),
			want: summary{Stuck: []string{"old-0", "old-1"}},
		},
		"with partition rollback, updated pods beyond replicas minus a grown partition go back to the current revision in place": {
			in: with(func(in *planInput) {
				in.replicas, in.partition, in.maxUnavailable = 4, 3, 2
				in.sameRevision, in.rollback = false, true
				in.pods = join(pods("old", 1, false), pods("new", 3, true, inPlace("current")))
			}),
			want: summary{Update: []string{"new-0 to current", "new-1 to current"}},
		},
		"with partition rollback, a rollback spends maxUnavailable like an update: an unavailable pod goes first and costs nothing": {
			in: with(func(in *planInput) {
				in.replicas, in.partition, in.maxUnavailable = 4, 3, 1
				in.sameRevision, in.rollback = false, true
				in.pods = join(pods("old", 1, false), pods("new", 2, true, inPlace("current")), pods("down", 1, true, unavailable, inPlace("current")))
			}),
			want: summary{Update: []string{"down-0 to current"}, Blocked: 2},
		},
		"with partition rollback, an updated pod that cannot go back in place is recreated": {
			in: with(func(in *planInput) {
				in.replicas, in.partition = 2, 2
				in.sameRevision, in.rollback = false, true
				in.pods = join(pods("old", 1, false), pods("new", 1, true))
			}),
			want: summary{Recreate: []string{"new-0"}},
		},
		"without partition rollback (1.8's default), a grown partition leaves updated pods alone": {
			in: with(func(in *planInput) {
				in.replicas, in.partition, in.maxUnavailable = 4, 3, 2
				in.sameRevision = false
				in.pods = join(pods("old", 1, false), pods("new", 3, true, inPlace("current")))
			}),
			want: summary{},
		},
		"with preparing-update as update, a replacement keeps the partition at the current revision": {
			in: with(func(in *planInput) {
				in.replicas, in.partition = 2, 1
				in.sameRevision, in.preparingUpdateAsUpdate = false, true
				in.pods = pods("held", 1, false, inPlaceHooked, preparingUpdate)
			}),
			want: summary{CreateCurrent: 1},
		},
		"without preparing-update as update (1.8's default), a pod in PreparingUpdate counts as old and the replacement is updated": {
			in: with(func(in *planInput) {
				in.replicas, in.partition = 2, 1
				in.sameRevision = false
				in.pods = pods("held", 1, false, inPlaceHooked, preparingUpdate)
			}),
			want: summary{CreateUpdated: 1},
		},
		"with preparing-update as update, scaling down removes updated pods before old ones the partition keeps": {
			in: with(func(in *planInput) {
				in.replicas, in.partition = 2, 1
				in.sameRevision, in.preparingUpdateAsUpdate = false, true
				in.pods = join(pods("held", 1, false, inPlaceHooked, preparingUpdate), pods("old", 1, false), pods("new", 1, true))
			}),
			want: summary{Delete: []string{"new-0"}},
		},
		"without preparing-update as update (1.8's default), scaling down removes an old pod beyond the partition": {
			in: with(func(in *planInput) {
				in.replicas, in.partition = 2, 1
				in.sameRevision = false
				in.pods = join(pods("held", 1, false, inPlaceHooked, preparingUpdate, cost("-1")), pods("old", 1, false), pods("new", 1, true))
			}),
			want: summary{Delete: []string{"held-0"}},
		},
		"a pod whose claim templates changed is recreated and its claims go with it": {
			in: with(func(in *planInput) {
				in.replicas, in.maxUnavailable = 2, 2
				in.sameRevision, in.reuseClaims = false, true
				in.pods = join(pods("vct", 1, false, freshClaims), pods("img", 1, false, inPlace("r2")))
			}),
			want: summary{Update: []string{"img-0 to r2"}, Recreate: []string{"vct-0"}, DropClaims: []string{"vct-0"}},
		},
		"a held recreate whose claim templates changed loses its claims once the hook lets go": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.sameRevision, in.reuseClaims = false, true
				in.pods = join(pods("new", 1, true), pods("held", 1, false, markedRecreate, preparingDelete, freshClaims))
			}),
			want: summary{Delete: []string{"held-0"}},
		},
		"a pod in PreparingUpdate that its hook released updates before another pod moves to PreparingUpdate": {
			in: with(func(in *planInput) {
				in.replicas, in.partition, in.maxUnavailable = 3, 2, 3
				in.sameRevision = false
				in.pods = join(pods("released", 1, false, preparingUpdate, inPlace("r2")), pods("waiting", 1, false, unavailable, inPlaceHooked, inPlace("r2")),
					pods("keep", 1, false, inPlace("r2")))
			}),
			want: summary{Update: []string{"released-0 to r2"}},
		},
		"a stuck pod spends no budget, so pods of another revision still update": {
			in: with(func(in *planInput) {
				in.replicas = 2
				in.sameRevision = false
				in.pods = join(pods("stuck", 1, false, stuck), pods("other", 1, false, inPlace("r2")))
			}),
			want: summary{Update: []string{"other-0 to r2"}, Stuck: []string{"stuck-0"}},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		got := summarize(makePlan(tc.in))
		testkit.Diff(t, "plan", tc.want, got)
	})
}
