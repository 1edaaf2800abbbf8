package daemonset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestNodePlacement(t *testing.T) {
	n := func(labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	taint := func(key string, effect corev1.TaintEffect) corev1.Taint {
		return corev1.Taint{Key: key, Effect: effect}
	}
	tmpl := func(f func(*corev1.PodSpec)) *corev1.PodTemplateSpec {
		t := &corev1.PodTemplateSpec{}
		if f != nil {
			f(&t.Spec)
		}
		return t
	}
	run := placement{shouldRun: true, shouldContinue: true}
	tests := []struct {
		name string
		node *corev1.Node
		tmpl *corev1.PodTemplateSpec
		want placement
	}{
		{name: "a plain node runs the pod", node: n(nil), tmpl: tmpl(nil), want: run},
		{name: "a node that matches the nodeSelector runs the pod", node: n(map[string]string{"role": "edge"}),
			tmpl: tmpl(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"role": "edge"} }), want: run},
		{name: "a node that does not match the nodeSelector runs nothing", node: n(nil),
			tmpl: tmpl(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"role": "edge"} }), want: placement{}},
		{name: "a node outside the required node affinity runs nothing", node: n(map[string]string{"zone": "b"}),
			tmpl: tmpl(func(s *corev1.PodSpec) {
				s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}},
				}}}
			}), want: placement{}},
		{name: "a template pinned to another node runs nothing here", node: n(nil),
			tmpl: tmpl(func(s *corev1.PodSpec) { s.NodeName = "n2" }), want: placement{}},
		{name: "an untolerated NoSchedule taint keeps new pods off but lets a running one stay",
			node: n(nil, taint("dedicated", corev1.TaintEffectNoSchedule)), tmpl: tmpl(nil), want: placement{shouldContinue: true}},
		{name: "an untolerated NoExecute taint sends the pod away",
			node: n(nil, taint("dedicated", corev1.TaintEffectNoExecute)), tmpl: tmpl(nil), want: placement{}},
		{name: "a tolerated taint is no obstacle", node: n(nil, taint("dedicated", corev1.TaintEffectNoSchedule)),
			tmpl: tmpl(func(s *corev1.PodSpec) {
				s.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
			}), want: run},
		{name: "a cordoned node still runs the daemon, as every daemon tolerates unschedulable",
			node: n(nil, taint(taintUnschedulable, corev1.TaintEffectNoSchedule)), tmpl: tmpl(nil), want: run},
		{name: "a not-ready node keeps its daemon, as every daemon tolerates not-ready NoExecute",
			node: n(nil, taint(taintNotReady, corev1.TaintEffectNoExecute)), tmpl: tmpl(nil), want: run},
		{name: "a node under memory pressure still runs the daemon",
			node: n(nil, taint(taintMemoryPressure, corev1.TaintEffectNoSchedule)), tmpl: tmpl(nil), want: run},
		{name: "a node whose network is unavailable runs only host-network daemons",
			node: n(nil, taint(taintNetworkUnavailable, corev1.TaintEffectNoSchedule)), tmpl: tmpl(nil), want: placement{shouldContinue: true}},
		{name: "a host-network daemon tolerates an unavailable network",
			node: n(nil, taint(taintNetworkUnavailable, corev1.TaintEffectNoSchedule)), tmpl: tmpl(func(s *corev1.PodSpec) { s.HostNetwork = true }), want: run},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testkit.Diff(t, "placement", tt.want, nodePlacement(tt.node, tt.tmpl), cmp.AllowUnexported(placement{}))
		})
	}
}

func TestWithDaemonTolerationsKeepsTheUsersOwn(t *testing.T) {
	own := corev1.Toleration{Key: taintNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64)}
	got := withDaemonTolerations([]corev1.Toleration{own}, false)
	testkit.Diff(t, "the user's toleration changed", own, got[0])
	if len(got) != 6 {
		t.Errorf("%d tolerations, want the user's plus five defaults: %v", len(got), got)
	}
}
