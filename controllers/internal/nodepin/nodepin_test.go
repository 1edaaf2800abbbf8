package nodepin

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestPinToNodeReplacesRequiredAffinityAndTargetNodeReadsIt(t *testing.T) {
	spec := &corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}},
	}}}}
	PinToNode(spec, "n7")
	want := []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n7"}}}}}
	testkit.Diff(t, "required node affinity", want, spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms)
	if got := TargetNode(&corev1.Pod{Spec: *spec}); got != "n7" {
		t.Errorf("TargetNode of an unbound pinned pod = %q, want n7", got)
	}
	if got := TargetNode(&corev1.Pod{Spec: corev1.PodSpec{NodeName: "n8", Affinity: spec.Affinity}}); got != "n8" {
		t.Errorf("TargetNode of a bound pod = %q, want its nodeName n8", got)
	}
	if got := TargetNode(&corev1.Pod{}); got != "" {
		t.Errorf("TargetNode of a pod with neither = %q, want empty", got)
	}
}

func TestPlacementChanged(t *testing.T) {
	base := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"a": "1"}}}
	for _, tt := range []struct {
		name   string
		change func(n *corev1.Node)
		want   bool
	}{
		{"a heartbeat does not pass", func(n *corev1.Node) { n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady}} }, false},
		{"a label change passes", func(n *corev1.Node) { n.Labels["a"] = "2" }, true},
		{"a new taint passes", func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}} }, true},
		{"cordoning passes", func(n *corev1.Node) { n.Spec.Unschedulable = true }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			updated := base.DeepCopy()
			tt.change(updated)
			if got := PlacementChanged().Update(event.UpdateEvent{ObjectOld: base, ObjectNew: updated}); got != tt.want {
				t.Errorf("passes = %v, want %v", got, tt.want)
			}
		})
	}
}
