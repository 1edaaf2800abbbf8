package nodepodprobe

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func TestPlanMarks(t *testing.T) {
	marker := kinds.PodProbeMarker("m", "ns", "web").
		ExecProbe("healthy", "main", "game.io/healthy", "true").
		Marker(appsv1alpha1.ProbeSucceeded, "healthy", "true").
		AnnotationMarker(appsv1alpha1.ProbeFailed, "unhealthy", "yes").
		ExecProbe("labelled", "main", "", "true").Marker(appsv1alpha1.ProbeSucceeded, "role", "leader").
		ExecProbe("same-condition", "main", "game.io/healthy", "true").Obj()
	lookup := func(name string) *appsv1alpha1.PodProbeMarker {
		if name == "m" {
			return marker
		}
		return nil
	}
	t0 := metav1.Date(2026, 1, 1, 0, 0, 0, 0, metav1.Now().Location())
	state := func(name string, s appsv1alpha1.ProbeState, msg string) appsv1alpha1.ContainerProbeState {
		return appsv1alpha1.ContainerProbeState{Name: name, State: s, Message: msg, LastProbeTime: t0, LastTransitionTime: t0}
	}
	cond := func(s corev1.ConditionStatus, msg string) corev1.PodCondition {
		return corev1.PodCondition{Type: "game.io/healthy", Status: s, Message: msg, LastProbeTime: t0, LastTransitionTime: t0}
	}
	pod := builder.Pod("a", "ns").Obj()
	type tcase struct {
		pod    *corev1.Pod
		states []appsv1alpha1.ContainerProbeState
		want   Marks
	}
	cases := map[string]tcase{
		"a success sets the Succeeded policy's labels, removes nothing absent, and sets the condition True": {
			pod:    pod,
			states: []appsv1alpha1.ContainerProbeState{state("m#healthy", appsv1alpha1.ProbeSucceeded, "")},
			want: Marks{Labels: map[string]*string{"healthy": ptr.To("true")}, Annotations: map[string]*string{},
				Conditions: []corev1.PodCondition{cond(corev1.ConditionTrue, "")}},
		},
		"a failure removes the Succeeded policy's labels, sets the Failed policy's annotations and the condition False with the message": {
			pod:    builder.Pod("a", "ns").Label("healthy", "true").Condition("game.io/healthy", corev1.ConditionTrue).Obj(),
			states: []appsv1alpha1.ContainerProbeState{state("m#healthy", appsv1alpha1.ProbeFailed, "exit 1")},
			want: Marks{Labels: map[string]*string{"healthy": nil}, Annotations: map[string]*string{"unhealthy": ptr.To("yes")},
				Conditions: []corev1.PodCondition{cond(corev1.ConditionFalse, "exit 1")}},
		},
		"marks the pod already carries are not written again": {
			pod:    builder.Pod("a", "ns").Label("role", "leader").Obj(),
			states: []appsv1alpha1.ContainerProbeState{state("m#labelled", appsv1alpha1.ProbeSucceeded, "")},
			want:   Marks{Labels: map[string]*string{}, Annotations: map[string]*string{}},
		},
		"an Unknown state sets no policy and a False condition": {
			pod:    pod,
			states: []appsv1alpha1.ContainerProbeState{state("m#healthy", appsv1alpha1.ProbeUnknown, "")},
			want: Marks{Labels: map[string]*string{}, Annotations: map[string]*string{},
				Conditions: []corev1.PodCondition{cond(corev1.ConditionFalse, "")}},
		},
		"when two probes name one condition type the first result wins": {
			pod: pod,
			states: []appsv1alpha1.ContainerProbeState{state("m#healthy", appsv1alpha1.ProbeSucceeded, ""),
				state("m#same-condition", appsv1alpha1.ProbeFailed, "")},
			want: Marks{Labels: map[string]*string{"healthy": ptr.To("true")}, Annotations: map[string]*string{},
				Conditions: []corev1.PodCondition{cond(corev1.ConditionTrue, "")}},
		},
		"results of a gone marker, an unknown probe, a malformed name or an empty state change nothing": {
			pod: pod,
			states: []appsv1alpha1.ContainerProbeState{state("gone#healthy", appsv1alpha1.ProbeSucceeded, ""),
				state("m#nope", appsv1alpha1.ProbeSucceeded, ""), state("healthy", appsv1alpha1.ProbeSucceeded, ""),
				state("m#healthy", "", "")},
			want: Marks{Labels: map[string]*string{}, Annotations: map[string]*string{}},
		},
	}
	testkit.Cases(t, cases, func(t *testing.T, tc tcase) {
		got := PlanMarks(tc.pod, appsv1alpha1.PodProbeStatus{ProbeStates: tc.states}, lookup)
		testkit.Diff(t, "marks", tc.want, got)
	})
}

func TestPruneSpec(t *testing.T) {
	spec := appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{{Name: "a", UID: "1"}, {Name: "b", UID: "2"}}}
	got, changed := PruneSpec(spec, func(pp appsv1alpha1.PodProbe) bool { return pp.Name == "b" })
	want := appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{{Name: "b", UID: "2"}}}
	testkit.Diff(t, "a gone pod's entry is dropped", want, got)
	if !changed {
		t.Error("a gone pod's entry is dropped: changed=false, want true")
	}
	if _, changed := PruneSpec(want, func(appsv1alpha1.PodProbe) bool { return true }); changed {
		t.Error("with every pod live, nothing changes")
	}
}
