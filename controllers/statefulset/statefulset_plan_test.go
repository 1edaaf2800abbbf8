package statefulset

import (
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/controllers/internal/ordinals"
	"github.com/kruise-addon/kruise-addon/controllers/internal/slowstart"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// pi builds the planner's view of pod web-<o>: ready, available and at the update revision
// unless opts say otherwise.
func pi(o int, opts ...func(*podInfo)) podInfo {
	p := podInfo{pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: podName("web", o)}}, ordinal: o, updated: true, ready: true, available: true, state: appspub.LifecycleStateNormal}
	for _, f := range opts {
		f(&p)
	}
	return p
}

func old(p *podInfo)             { p.updated = false }
func notReady(p *podInfo)        { p.ready, p.available = false, false }
func terminating(p *podInfo)     { p.terminating, p.ready, p.available = true, false, false }
func failed(p *podInfo)          { p.finished, p.ready, p.available = true, false, false }
func specified(p *podInfo)       { p.specified = true }
func preDeleteHooked(p *podInfo) { p.preDeleteHooked = true }
func inPlaceHooked(p *podInfo)   { p.inPlaceHooked = true }
func stuck(p *podInfo)           { p.updated, p.route = false, inplaceupdate.RouteStuck }
func inPlace(p *podInfo) {
	p.updated, p.route, p.inPlace = false, inplaceupdate.RouteInPlace, &inplaceupdate.Plan{Revision: "web-2"}
}

// The PVCs of a pod, while PVCs are resized: as the templates (done), smaller than them with
// the capacity they request (small), grown but without the capacity yet (growing), or waiting for a file system resize
// (fsPending).
func claimsDone(p *podInfo)      { p.claims = claimState{compatible: true, ready: true, completed: true} }
func claimsSmall(p *podInfo)     { p.claims = claimState{ready: true} }
func claimsGrowing(p *podInfo)   { p.claims = claimState{compatible: true} }
func claimsFSPending(p *podInfo) { p.claims = claimState{compatible: true, completed: true} }

func priority(w string) func(*podInfo) {
	return func(p *podInfo) { p.pod.Labels = map[string]string{"prio": w} }
}

// summary is a plan by pod names, for comparison.
type summary struct {
	Create          []int
	CreateCurrent   []int
	Delete          []string
	DeleteClaims    []string
	RestoreClaims   []int
	PrepareDelete   []string
	Recreate        []string
	InPlace         []string
	PrepareUpdate   []string
	PrepareRecreate []string
	Stuck           []string
	Resize          []string
	Halted          bool
}

func summarize(p plan) summary {
	var s summary
	names := func(pods []*corev1.Pod) []string {
		var out []string
		for _, p := range pods {
			out = append(out, p.Name)
		}
		return out
	}
	for _, c := range p.create {
		if c.current {
			s.CreateCurrent = append(s.CreateCurrent, c.ordinal)
		} else {
			s.Create = append(s.Create, c.ordinal)
		}
	}
	for _, d := range p.delete {
		s.Delete = append(s.Delete, d.pod.Name)
		if d.deleteClaims {
			s.DeleteClaims = append(s.DeleteClaims, d.pod.Name)
		}
	}
	for _, u := range p.update {
		if u.InPlace != nil {
			s.InPlace = append(s.InPlace, u.Pod.Name)
		} else {
			s.Recreate = append(s.Recreate, u.Pod.Name)
		}
	}
	s.PrepareDelete, s.PrepareUpdate, s.PrepareRecreate, s.Stuck = names(p.prepareDelete), names(p.prepareUpdate), names(p.prepareRecreate), names(p.stuck)
	s.Resize = names(p.resize)
	s.Halted = p.halted
	s.RestoreClaims = p.restoreClaims
	return s
}

// ords is the set of n ordinals from from up, skipping the reserved ones.
func ords(from, n int, reserved ...int32) ordinals.Set {
	var list []intstr.IntOrString
	for _, o := range reserved {
		list = append(list, intstr.FromInt32(o))
	}
	r, _ := ordinals.ParseReserved(list, field.NewPath("spec", "reserveOrdinals"))
	return ordinals.New(from, n, r)
}

func TestMakePlan(t *testing.T) {
	rolling := func(in planInput) planInput {
		in.rollingUpdate, in.maxUnavailable = true, max(1, in.maxUnavailable)
		if in.scaleMaxUnavailable == 0 {
			in.scaleMaxUnavailable = -1
		}
		return in
	}
	type tcase struct {
		in   planInput
		want summary
	}
	tests := map[string]tcase{
		"OrderedReady creates only the lowest missing ordinal and waits for it": {
			in:   rolling(planInput{ordinals: ords(0, 3), sameRevision: true}),
			want: summary{Create: []int{0}, Halted: true},
		},
		"OrderedReady halts behind a pod that is not ready": {
			in:   rolling(planInput{ordinals: ords(0, 3), sameRevision: true, pods: []podInfo{pi(0, notReady)}}),
			want: summary{Halted: true},
		},
		"OrderedReady makes a missing predecessor again even while a later pod is unhealthy": {
			in:   rolling(planInput{ordinals: ords(0, 2), sameRevision: true, pods: []podInfo{pi(1, notReady)}}),
			want: summary{Create: []int{0}, Halted: true},
		},
		"Parallel creates every missing ordinal at once": {
			in:   rolling(planInput{ordinals: ords(0, 3), parallel: true, sameRevision: true, pods: []podInfo{pi(1, notReady)}}),
			want: summary{Create: []int{0, 2}},
		},
		"Parallel creation stops at scaleStrategy.maxUnavailable": {
			in:   rolling(planInput{ordinals: ords(0, 5), parallel: true, sameRevision: true, scaleMaxUnavailable: 2, pods: []podInfo{pi(0, notReady)}}),
			want: summary{Create: []int{1}},
		},
		"ordinals.start and reserved ordinals are where pods go": {
			in:   rolling(planInput{ordinals: ords(5, 2, 6), parallel: true, sameRevision: true}),
			want: summary{Create: []int{5, 7}},
		},
		"OrderedReady scale-down removes the highest ordinal first, one at a time": {
			in:   rolling(planInput{ordinals: ords(0, 1), sameRevision: true, pods: []podInfo{pi(0), pi(1), pi(2)}}),
			want: summary{Delete: []string{"web-2"}},
		},
		"OrderedReady scale-down waits while a removed pod is still terminating": {
			in:   rolling(planInput{ordinals: ords(0, 1), sameRevision: true, pods: []podInfo{pi(0), pi(1), pi(2, terminating)}}),
			want: summary{},
		},
		"OrderedReady scale-down waits while a replica is not ready": {
			in:   rolling(planInput{ordinals: ords(0, 1), sameRevision: true, pods: []podInfo{pi(0, notReady), pi(1)}}),
			want: summary{Halted: true},
		},
		"OrderedReady scale-down removes nothing while the highest removed pod and a lower one are not ready": {
			in:   rolling(planInput{ordinals: ords(0, 0), sameRevision: true, pods: []podInfo{pi(0, notReady), pi(1, notReady), pi(2, notReady)}}),
			want: summary{},
		},
		"OrderedReady scale-down removes the highest pod when it is the lowest unhealthy removed pod": {
			in:   rolling(planInput{ordinals: ords(0, 2), sameRevision: true, pods: []podInfo{pi(0), pi(1), pi(2, notReady)}}),
			want: summary{Delete: []string{"web-2"}},
		},
		"OrderedReady scale-down removes a ready highest pod while a lower removed pod is not ready": {
			in:   rolling(planInput{ordinals: ords(0, 1), sameRevision: true, pods: []podInfo{pi(0), pi(1, notReady), pi(2)}}),
			want: summary{Delete: []string{"web-2"}},
		},
		"Parallel scale-down removes every extra pod at once": {
			in:   rolling(planInput{ordinals: ords(0, 1), parallel: true, sameRevision: true, pods: []podInfo{pi(0), pi(1), pi(2)}}),
			want: summary{Delete: []string{"web-2", "web-1"}},
		},
		"a reserved ordinal's pod is deleted and the next free ordinal is made": {
			in:   rolling(planInput{ordinals: ords(0, 2, 1), parallel: true, sameRevision: true, pods: []podInfo{pi(0), pi(1)}}),
			want: summary{Create: []int{2}, Delete: []string{"web-1"}},
		},
		"whenScaled Delete removes the claims of removed ordinals": {
			in:   rolling(planInput{ordinals: ords(0, 1), parallel: true, sameRevision: true, deleteClaimsOnScaleDown: true, pods: []podInfo{pi(0), pi(1)}}),
			want: summary{Delete: []string{"web-1"}, DeleteClaims: []string{"web-1"}},
		},
		"the preDelete hook holds a removed pod in PreparingDelete": {
			in:   rolling(planInput{ordinals: ords(0, 1), parallel: true, sameRevision: true, pods: []podInfo{pi(0), pi(1, preDeleteHooked)}}),
			want: summary{PrepareDelete: []string{"web-1"}},
		},
		"a pending pod whose claim is missing gets its claims made again": {
			in: rolling(planInput{ordinals: ords(0, 2), parallel: true, sameRevision: true, pods: []podInfo{pi(0), pi(1, func(p *podInfo) {
				p.pending, p.claimsMissing, p.ready, p.available = true, true, false, false
			})}}),
			want: summary{RestoreClaims: []int{1}},
		},
		"a running pod whose claim is missing is left alone": {
			in:   rolling(planInput{ordinals: ords(0, 1), parallel: true, sameRevision: true, pods: []podInfo{pi(0, func(p *podInfo) { p.claimsMissing = true })}}),
			want: summary{},
		},
		"a failed (evicted) pod is deleted to be made again": {
			in:   rolling(planInput{ordinals: ords(0, 2), parallel: true, sameRevision: true, pods: []podInfo{pi(0, failed), pi(1)}}),
			want: summary{Delete: []string{"web-0"}},
		},
		"a rolling update recreates the highest old ordinal first, one at a time": {
			in:   rolling(planInput{ordinals: ords(0, 3), pods: []podInfo{pi(0, old), pi(1, old), pi(2, old)}}),
			want: summary{Recreate: []string{"web-2"}},
		},
		"a rolling update waits while an updated pod is not ready yet": {
			in:   rolling(planInput{ordinals: ords(0, 3), pods: []podInfo{pi(0, old), pi(1, old), pi(2, notReady)}}),
			want: summary{Halted: true},
		},
		"the partition keeps the lowest ordinals at the current revision": {
			in:   rolling(planInput{ordinals: ords(0, 3), partition: 2, pods: []podInfo{pi(0, old), pi(1, old), pi(2)}}),
			want: summary{},
		},
		"a pod made again below the partition takes the current revision": {
			in:   rolling(planInput{ordinals: ords(0, 3), parallel: true, partition: 2, pods: []podInfo{pi(1, old), pi(2)}}),
			want: summary{CreateCurrent: []int{0}},
		},
		"Parallel maxUnavailable updates that many pods at once": {
			in:   rolling(planInput{ordinals: ords(0, 4), parallel: true, maxUnavailable: 2, pods: []podInfo{pi(0, old), pi(1, old), pi(2, old), pi(3, old)}}),
			want: summary{Recreate: []string{"web-3", "web-2"}},
		},
		"an unavailable old pod is updated without using the budget": {
			in:   rolling(planInput{ordinals: ords(0, 3), parallel: true, pods: []podInfo{pi(0, old), pi(1, old, notReady), pi(2, old)}}),
			want: summary{Recreate: []string{"web-1"}},
		},
		"paused stops the update but not the scaling": {
			in:   rolling(planInput{ordinals: ords(0, 3), parallel: true, paused: true, pods: []podInfo{pi(0, old), pi(1, old)}}),
			want: summary{Create: []int{2}},
		},
		"OnDelete never updates a pod": {
			in:   planInput{ordinals: ords(0, 2), maxUnavailable: 1, scaleMaxUnavailable: -1, pods: []podInfo{pi(0, old), pi(1, old)}},
			want: summary{},
		},
		"a specified-delete pod is deleted to be made again, even under OnDelete": {
			in:   planInput{ordinals: ords(0, 2), maxUnavailable: 1, scaleMaxUnavailable: -1, pods: []podInfo{pi(0, old), pi(1, old, specified)}},
			want: summary{Delete: []string{"web-1"}},
		},
		"an in-place route updates the pod in place": {
			in:   rolling(planInput{ordinals: ords(0, 2), pods: []podInfo{pi(0, inPlace), pi(1, inPlace)}}),
			want: summary{InPlace: []string{"web-1"}},
		},
		"the inPlaceUpdate hook holds an in-place update in PreparingUpdate": {
			in:   rolling(planInput{ordinals: ords(0, 1), pods: []podInfo{pi(0, inPlace, inPlaceHooked)}}),
			want: summary{PrepareUpdate: []string{"web-0"}},
		},
		"a recreate goes through the preDelete hook, not the inPlaceUpdate hook": {
			in:   rolling(planInput{ordinals: ords(0, 1), pods: []podInfo{pi(0, old, preDeleteHooked, inPlaceHooked)}}),
			want: summary{PrepareRecreate: []string{"web-0"}},
		},
		"an InPlaceOnly change that cannot go in place touches no pod": {
			in:   rolling(planInput{ordinals: ords(0, 2), pods: []podInfo{pi(0, stuck), pi(1, stuck)}}),
			want: summary{Stuck: []string{"web-1", "web-0"}},
		},
		"resizing PVCs, a pod at the update revision whose PVCs are smaller than the templates has them grown and is not recreated": {
			in:   rolling(planInput{ordinals: ords(0, 2), resizeClaims: true, pods: []podInfo{pi(0, claimsDone), pi(1, claimsSmall)}}),
			want: summary{Resize: []string{"web-1"}},
		},
		"resizing PVCs, an old pod's smaller PVCs grow first and the pod is not updated yet": {
			in:   rolling(planInput{ordinals: ords(0, 2), resizeClaims: true, pods: []podInfo{pi(0, old, claimsDone), pi(1, old, claimsSmall)}}),
			want: summary{Resize: []string{"web-1"}},
		},
		"resizing PVCs, an old pod waits while its PVCs lack the capacity they request": {
			in:   rolling(planInput{ordinals: ords(0, 2), resizeClaims: true, pods: []podInfo{pi(0, old, claimsDone), pi(1, old, claimsGrowing)}}),
			want: summary{},
		},
		"resizing PVCs, an old pod whose PVCs wait for a file system resize is updated, so that it starts again": {
			in:   rolling(planInput{ordinals: ords(0, 2), resizeClaims: true, pods: []podInfo{pi(0, old, claimsDone), pi(1, old, claimsFSPending)}}),
			want: summary{Recreate: []string{"web-1"}},
		},
		"resizing PVCs, a pod whose PVC lacks the capacity it requests counts against maxUnavailable": {
			in:   rolling(planInput{ordinals: ords(0, 2), resizeClaims: true, pods: []podInfo{pi(0, old, claimsDone), pi(1, claimsGrowing)}}),
			want: summary{},
		},
		"resizing PVCs, growing a pod's PVCs uses the unavailability budget": {
			in:   rolling(planInput{ordinals: ords(0, 3), parallel: true, maxUnavailable: 1, resizeClaims: true, pods: []podInfo{pi(0, claimsSmall), pi(1, claimsSmall), pi(2, claimsDone)}}),
			want: summary{Resize: []string{"web-1"}},
		},
		"without PVC resizing, PVCs smaller than the templates change nothing": {
			in:   rolling(planInput{ordinals: ords(0, 2), pods: []podInfo{pi(0, claimsSmall), pi(1, old, claimsSmall)}}),
			want: summary{Recreate: []string{"web-1"}},
		},
		"an unordered update follows the priority strategy": {
			in: rolling(planInput{ordinals: ords(0, 3), parallel: true, unordered: true,
				priority: &appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{{Weight: 50, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"prio": "high"}}}}},
				pods:     []podInfo{pi(0, old, priority("low")), pi(1, old, priority("high")), pi(2, old, priority("low"))}}),
			want: summary{Recreate: []string{"web-1"}},
		},
		"an unordered update's partition keeps the last pods in priority order": {
			in: rolling(planInput{ordinals: ords(0, 3), parallel: true, unordered: true, maxUnavailable: 3, partition: 2,
				priority: &appspub.UpdatePriorityStrategy{WeightPriority: []appspub.UpdatePriorityWeightTerm{{Weight: 50, MatchSelector: metav1.LabelSelector{MatchLabels: map[string]string{"prio": "high"}}}}},
				pods:     []podInfo{pi(0, old, priority("high")), pi(1, old, priority("low")), pi(2, old, priority("low"))}}),
			want: summary{Recreate: []string{"web-0"}},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		got := summarize(makePlan(tt.in))
		sort.Strings(got.DeleteClaims)
		testkit.Diff(t, "plan", tt.want, got)
	})
}

func TestMakePlanOfAHugeStatefulSetIsBoundedByItsPods(t *testing.T) {
	type share struct {
		// Wanted is how many pods the plan would create; Planned how many this reconcile lists,
		// from First to Last.
		Wanted, Planned, First, Last int
		Delete                       []string
	}
	huge := ords(0, ordinals.Max)
	type tcase struct {
		in   planInput
		want share
	}
	tests := map[string]tcase{
		"Parallel at the largest int32 of replicas lists one reconcile's share and counts the rest": {
			in:   planInput{ordinals: huge, parallel: true, sameRevision: true, scaleMaxUnavailable: -1, pods: []podInfo{pi(0), pi(1), pi(2)}},
			want: share{Wanted: ordinals.Max - 3, Planned: slowstart.MaxPerReconcile, First: 3, Last: 3 + slowstart.MaxPerReconcile - 1},
		},
		"scaleStrategy.maxUnavailable bounds what a huge set wants": {
			in:   planInput{ordinals: huge, parallel: true, sameRevision: true, scaleMaxUnavailable: 10, pods: []podInfo{pi(0, notReady), pi(1, notReady)}},
			want: share{Wanted: 8, Planned: 8, First: 2, Last: 9},
		},
		"OrderedReady at the largest int32 of replicas wants the one next pod": {
			in:   planInput{ordinals: huge, sameRevision: true, scaleMaxUnavailable: -1, pods: []podInfo{pi(0), pi(1)}},
			want: share{Wanted: 1, Planned: 1, First: 2, Last: 2},
		},
		"a pod on a high ordinal of a huge set is a replica, and the gap below it is filled from the lowest": {
			in:   planInput{ordinals: huge, parallel: true, sameRevision: true, scaleMaxUnavailable: -1, pods: []podInfo{pi(2_000_000_000)}},
			want: share{Wanted: ordinals.Max - 1, Planned: slowstart.MaxPerReconcile, First: 0, Last: slowstart.MaxPerReconcile - 1},
		},
		"a huge set scaled to 0 deletes its pods and wants none": {
			in:   planInput{ordinals: ords(0, 0), parallel: true, sameRevision: true, scaleMaxUnavailable: -1, pods: []podInfo{pi(0), pi(5)}},
			want: share{Delete: []string{"web-5", "web-0"}},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		p := makePlan(tt.in)
		got := share{Wanted: p.createWanted, Planned: len(p.create), Delete: summarize(p).Delete}
		if len(p.create) > 0 {
			got.First, got.Last = p.create[0].ordinal, p.create[len(p.create)-1].ordinal
		}
		testkit.Diff(t, "plan", tt.want, got)
	})
}
