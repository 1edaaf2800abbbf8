package daemonset

import (
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/controllers/internal/inplaceupdate"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// Builders for planner inputs. A pod is named after its node and a suffix: "n1-old", "n1-new".

type podOpt func(*podInfo)

func pod(name string, opts ...podOpt) podInfo {
	pi := podInfo{pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}, available: true, state: appspub.LifecycleStateNormal}
	for _, o := range opts {
		o(&pi)
	}
	return pi
}

func updated(pi *podInfo)     { pi.updated = true }
func unavailable(pi *podInfo) { pi.available = false }
func failed(pi *podInfo)      { pi.failed = true }
func hooked(pi *podInfo)      { pi.preDeleteHeld = true }
func preDeleting(pi *podInfo) { pi.state = appspub.LifecycleStatePreparingDelete }
func inPlace(pi *podInfo) {
	pi.route, pi.inPlace = inplaceupdate.RouteInPlace, &inplaceupdate.Plan{Revision: "ds-new"}
}

func node(name string, pods ...podInfo) nodeInfo {
	return nodeInfo{name: name, placement: placement{shouldRun: true, shouldContinue: true}, selected: true, pods: pods}
}

func (n nodeInfo) ineligible() nodeInfo      { n.placement = placement{}; return n }
func (n nodeInfo) noSchedule() nodeInfo      { n.placement = placement{shouldContinue: true}; return n }
func (n nodeInfo) unselected() nodeInfo      { n.selected = false; return n }
func (n nodeInfo) withTerminating() nodeInfo { n.terminating = 1; return n }
func (n nodeInfo) withNoPods() nodeInfo      { n.pods = nil; return n }

// oldNodes returns n nodes n0..n(n-1), each with an available pod of the old revision.
func oldNodes(n int) []nodeInfo {
	var out []nodeInfo
	for i := range n {
		name := string(rune('a'+i)) + "-node"
		out = append(out, node(name, pod(name+"-old")))
	}
	return out
}

// summary is a plan in names, for comparing.
type summary struct {
	Create, Delete, PrepareDelete, Update []string
	Deferred                              int
}

func summarize(p plan) summary {
	names := func(pods []*corev1.Pod) []string {
		var out []string
		for _, p := range pods {
			out = append(out, p.Name)
		}
		sort.Strings(out)
		return out
	}
	s := summary{Create: append([]string(nil), p.create...), Delete: names(p.delete), PrepareDelete: names(p.prepareDelete), Deferred: p.deferred}
	sort.Strings(s.Create)
	for _, u := range p.update {
		s.Update = append(s.Update, u.Pod.Name)
	}
	sort.Strings(s.Update)
	return s
}

func TestMakePlan(t *testing.T) {
	rolling := func(nodes []nodeInfo) planInput {
		return planInput{nodes: nodes, rolling: true, maxUnavailable: 1, burst: 250}
	}
	// progressive is a rolling update with the progressive-create-pod annotation and partition.
	progressive := func(partition int, nodes ...nodeInfo) planInput {
		in := rolling(nodes)
		in.progressive, in.partition = true, partition
		return in
	}
	type tcase struct {
		in   planInput
		want summary
	}
	tests := map[string]tcase{
		"an eligible node without a pod gets one": {
			in:   rolling([]nodeInfo{node("a"), node("b", pod("b-new", updated))}),
			want: summary{Create: []string{"a"}},
		},
		"progressive creation gives pods only to desired nodes less partition, the first by name": {
			in:   progressive(3, node("e"), node("d"), node("c"), node("b"), node("a")),
			want: summary{Create: []string{"a", "b"}},
		},
		"progressive creation counts nodes with a pod of the update revision against the partition's room": {
			in:   progressive(2, node("a", pod("a-new", updated)), node("b"), node("c"), node("d")),
			want: summary{Create: []string{"b"}},
		},
		"progressive creation does not count nodes with an old pod": {
			in:   progressive(2, node("a", pod("a-old")), node("b"), node("c"), node("d")),
			want: summary{Create: []string{"b", "c"}},
		},
		"progressive creation counts a node with two pods of the update revision as not updated": {
			in:   progressive(2, node("a", pod("a-new", updated), pod("a-new2", updated)), node("b"), node("c"), node("d")),
			want: summary{Create: []string{"b", "c"}, Delete: []string{"a-new2"}},
		},
		"progressive creation does not count pods on nodes that are gone": {
			in: progressive(2, node("a"), node("b"), node("c"),
				nodeInfo{name: "gone", gone: true, pods: []podInfo{pod("gone-new", updated)}}),
			want: summary{Create: []string{"a"}, Delete: []string{"gone-new"}},
		},
		"progressive creation with a partition of every node creates nothing": {
			in:   progressive(5, node("a"), node("b")),
			want: summary{},
		},
		"progressive creation with partition 0 creates on every node": {
			in:   progressive(0, node("a"), node("b")),
			want: summary{Create: []string{"a", "b"}},
		},
		"a partition without the progressive annotation creates on every node": {
			in:   planInput{nodes: []nodeInfo{node("a"), node("b")}, rolling: true, partition: 2, maxUnavailable: 1, burst: 250},
			want: summary{Create: []string{"a", "b"}},
		},
		"progressive creation under OnDelete creates on every node": {
			in:   planInput{nodes: []nodeInfo{node("a"), node("b")}, progressive: true, partition: 2, burst: 250},
			want: summary{Create: []string{"a", "b"}},
		},
		"a node whose old pod is still terminating waits for it before it gets a new one": {
			in:   rolling([]nodeInfo{node("a").withTerminating()}),
			want: summary{},
		},
		"a node that stopped matching loses its pod": {
			in:   rolling([]nodeInfo{node("a", pod("a-new", updated)).ineligible()}),
			want: summary{Delete: []string{"a-new"}},
		},
		"a node tainted NoSchedule gets no new pod but keeps the one it has": {
			in:   rolling([]nodeInfo{node("a").noSchedule(), node("b", pod("b-new", updated)).noSchedule()}),
			want: summary{},
		},
		"a pod the preDelete hook holds goes to PreparingDelete instead of being deleted": {
			in:   rolling([]nodeInfo{node("a", pod("a-new", updated, hooked)).ineligible()}),
			want: summary{PrepareDelete: []string{"a-new"}},
		},
		"a pod in PreparingDelete stays while the hook holds it": {
			in:   rolling([]nodeInfo{node("a", pod("a-new", updated, hooked, preDeleting)).ineligible()}),
			want: summary{},
		},
		"a pod in PreparingDelete is deleted once the hook lets go": {
			in:   rolling([]nodeInfo{node("a", pod("a-old", preDeleting))}),
			want: summary{Delete: []string{"a-old"}},
		},
		"a failed pod is deleted so that it is replaced": {
			in:   rolling([]nodeInfo{node("a", pod("a-new", updated, failed))}),
			want: summary{Delete: []string{"a-new"}},
		},
		"a node with two pods keeps the oldest": {
			in:   rolling([]nodeInfo{node("a", pod("a-1", updated), pod("a-2", updated))}),
			want: summary{Delete: []string{"a-2"}},
		},
		"a rolling update deletes one available old pod at a time with maxUnavailable 1": {
			in:   rolling(oldNodes(3)),
			want: summary{Delete: []string{"c-node-old"}},
		},
		"a rolling update replaces maxUnavailable pods at once": {
			in:   planInput{nodes: oldNodes(4), rolling: true, maxUnavailable: 3, burst: 250},
			want: summary{Delete: []string{"b-node-old", "c-node-old", "d-node-old"}},
		},
		"a node getting its replacement pod counts as unavailable, so no other old pod goes": {
			in:   rolling(append(oldNodes(2), node("z", pod("z-new", updated)).withNoPods())),
			want: summary{Create: []string{"z"}},
		},
		"a node losing a surplus pod counts as unavailable": {
			in:   rolling(append(oldNodes(2), node("z", pod("z-1", updated), pod("z-2", updated)))),
			want: summary{Delete: []string{"z-2"}},
		},
		"a node without an available pod uses up the unavailability budget": {
			in:   rolling(append(oldNodes(2), node("z", pod("z-new", updated, unavailable)))),
			want: summary{},
		},
		"an old pod that is not available is replaced whatever the budget": {
			in:   rolling([]nodeInfo{node("a", pod("a-old", unavailable)), node("b", pod("b-new", updated, unavailable))}),
			want: summary{Delete: []string{"a-old"}},
		},
		"InPlaceIfPossible updates a pod in place when its revision allows it": {
			in:   rolling([]nodeInfo{node("a", pod("a-old", inPlace))}),
			want: summary{Update: []string{"a-old"}},
		},
		"a recreate in a rolling update goes through the preDelete hook": {
			in:   rolling([]nodeInfo{node("a", pod("a-old", hooked))}),
			want: summary{PrepareDelete: []string{"a-old"}},
		},
		"an in-place update does not go through the preDelete hook": {
			in:   rolling([]nodeInfo{node("a", pod("a-old", hooked, inPlace))}),
			want: summary{Update: []string{"a-old"}},
		},
		"a node whose old pod is in PreparingDelete counts as unavailable": {
			in:   rolling([]nodeInfo{node("a", pod("a-old", hooked, preDeleting)), node("b", pod("b-old"))}),
			want: summary{},
		},
		"a paused update replaces nothing but still places pods": {
			in:   planInput{nodes: append(oldNodes(2), node("z")), rolling: true, paused: true, maxUnavailable: 1, burst: 250},
			want: summary{Create: []string{"z"}},
		},
		"OnDelete replaces nothing and new nodes get the update revision": {
			in:   planInput{nodes: append(oldNodes(2), node("z")), maxUnavailable: 1, burst: 250},
			want: summary{Create: []string{"z"}},
		},
		"the partition keeps that many nodes at the old revision": {
			in:   planInput{nodes: append(oldNodes(3), node("z", pod("z-new", updated))), rolling: true, maxUnavailable: 4, partition: 2, burst: 250},
			want: summary{Delete: []string{"c-node-old"}},
		},
		"a partition of every node updates nothing": {
			in:   planInput{nodes: oldNodes(3), rolling: true, maxUnavailable: 3, partition: 3, burst: 250},
			want: summary{},
		},
		"rollingUpdate.selector updates only the nodes it picks": {
			in:   planInput{nodes: []nodeInfo{node("a", pod("a-old")), node("b", pod("b-old")).unselected()}, rolling: true, maxUnavailable: 2, burst: 250},
			want: summary{Delete: []string{"a-old"}},
		},
		"maxSurge creates a new pod next to an available old one": {
			in:   planInput{nodes: oldNodes(3), rolling: true, maxSurge: 1, burst: 250},
			want: summary{Create: []string{"c-node"}},
		},
		"with maxSurge the old pod goes once the new one is available": {
			in:   planInput{nodes: []nodeInfo{node("a", pod("a-old"), pod("a-new", updated)), node("b", pod("b-old"))}, rolling: true, maxSurge: 1, burst: 250},
			want: summary{Delete: []string{"a-old"}, Create: []string{"b"}},
		},
		"with maxSurge a new pod not yet available holds the surge": {
			in:   planInput{nodes: []nodeInfo{node("a", pod("a-old"), pod("a-new", updated, unavailable)), node("b", pod("b-old"))}, rolling: true, maxSurge: 1, burst: 250},
			want: summary{},
		},
		"with maxSurge a node whose old pod is not available gets its new pod at once": {
			in:   planInput{nodes: []nodeInfo{node("a", pod("a-old"), pod("a-new", updated, unavailable)), node("b", pod("b-old", unavailable))}, rolling: true, maxSurge: 1, burst: 250},
			want: summary{Create: []string{"b"}},
		},
		"burstReplicas caps the pods created in one reconcile": {
			in:   planInput{nodes: []nodeInfo{node("a"), node("b"), node("c")}, rolling: true, maxUnavailable: 1, burst: 2},
			want: summary{Create: []string{"a", "b"}, Deferred: 1},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		testkit.Diff(t, "plan", tt.want, summarize(makePlan(tt.in)))
	})
}
