package podprobemarker

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// unmarked is a marker probe as ServerlessProbes writes it: without its markerPolicy.
func unmarked(ppm *appsv1alpha1.PodProbeMarker, i int) appsv1alpha1.PodContainerProbe {
	p := *ppm.Spec.Probes[i].DeepCopy()
	p.MarkerPolicy = nil
	return p
}

func TestServerlessProbes(t *testing.T) {
	pod := builder.Pod("p", "ns").Container("log", builder.DefaultImage).InitContainer("proxy", builder.DefaultImage).
		InitContainer("setup", builder.DefaultImage).Obj()
	pod.Spec.InitContainers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)

	healthy := kinds.PodProbeMarker("a", "ns", "web").
		ExecProbe("healthy", "main", "game.io/healthy", "true").Marker(appsv1alpha1.ProbeSucceeded, "ok", "true").Obj()
	markerOnly := kinds.PodProbeMarker("a", "ns", "web").
		ExecProbe("healthy", "main", "", "true").Marker(appsv1alpha1.ProbeSucceeded, "ok", "true").Obj()
	containers := kinds.PodProbeMarker("a", "ns", "web").
		ExecProbe("in-sidecar", "proxy", "game.io/proxy", "true").
		ExecProbe("in-init", "setup", "game.io/setup", "true").
		ExecProbe("elsewhere", "missing", "game.io/missing", "true").Obj()
	sameCondition := kinds.PodProbeMarker("b", "ns", "web").ExecProbe("other", "log", "game.io/healthy", "true").Obj()
	sameKey := kinds.PodProbeMarker("b", "ns", "web").ExecProbe("healthy", "main", "game.io/other", "true").Obj()
	second := kinds.PodProbeMarker("b", "ns", "web").ExecProbe("log", "log", "game.io/log", "true").Obj()

	tests := []struct {
		name       string
		ppms       []*appsv1alpha1.PodProbeMarker
		wantProbes []appsv1alpha1.PodContainerProbe
		wantNames  []string
	}{
		{name: "a probe with a condition type is written without its markerPolicy", ppms: []*appsv1alpha1.PodProbeMarker{healthy},
			wantProbes: []appsv1alpha1.PodContainerProbe{unmarked(healthy, 0)}, wantNames: []string{"a"}},
		{name: "a probe without a condition type is left out", ppms: []*appsv1alpha1.PodProbeMarker{markerOnly}},
		{name: "probes of restartable init containers count, of other init containers or absent containers not",
			ppms: []*appsv1alpha1.PodProbeMarker{containers}, wantProbes: []appsv1alpha1.PodContainerProbe{unmarked(containers, 0)}, wantNames: []string{"a"}},
		{name: "a later probe of a condition type already written is left out",
			ppms: []*appsv1alpha1.PodProbeMarker{healthy, sameCondition}, wantProbes: []appsv1alpha1.PodContainerProbe{unmarked(healthy, 0)}, wantNames: []string{"a"}},
		{name: "a later probe of the same container and name is left out",
			ppms: []*appsv1alpha1.PodProbeMarker{healthy, sameKey}, wantProbes: []appsv1alpha1.PodContainerProbe{unmarked(healthy, 0)}, wantNames: []string{"a"}},
		{name: "the probes of several markers are written in order and the markers listed sorted",
			ppms: []*appsv1alpha1.PodProbeMarker{second, healthy}, wantProbes: []appsv1alpha1.PodContainerProbe{unmarked(second, 0), unmarked(healthy, 0)}, wantNames: []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probes, names := ServerlessProbes(pod, tt.ppms)
			testkit.Diff(t, "probes", tt.wantProbes, probes)
			testkit.Diff(t, "markers", tt.wantNames, names)
		})
	}
}

func TestServerlessMarks(t *testing.T) {
	ppm := kinds.PodProbeMarker("m", "ns", "web").
		ExecProbe("healthy", "main", "game.io/healthy", "true").
		Marker(appsv1alpha1.ProbeSucceeded, "healthy", "true").
		AnnotationMarker(appsv1alpha1.ProbeFailed, "example.com/unhealthy", "yes").
		Marker(appsv1alpha1.ProbeUnknown, "healthy", "unknown").Obj()
	withCondition := func(status corev1.ConditionStatus) *builder.PodBuilder {
		return builder.Pod("p", "ns").Condition("game.io/healthy", status)
	}
	str := func(s string) *string { return &s }
	none := map[string]*string{}

	tests := []struct {
		name            string
		pod             *corev1.Pod
		wantLabels      map[string]*string
		wantAnnotations map[string]*string
	}{
		{name: "a True condition sets the Succeeded policy's labels", pod: withCondition(corev1.ConditionTrue).Obj(),
			wantLabels: map[string]*string{"healthy": str("true")}, wantAnnotations: none},
		{name: "a False condition sets the Failed policy's annotations and keeps the Succeeded labels, as 1.8 does",
			pod:        withCondition(corev1.ConditionFalse).Label("healthy", "true").Obj(),
			wantLabels: none, wantAnnotations: map[string]*string{"example.com/unhealthy": str("yes")}},
		{name: "an Unknown condition sets the Unknown policy's labels", pod: withCondition(corev1.ConditionUnknown).Label("healthy", "true").Obj(),
			wantLabels: map[string]*string{"healthy": str("unknown")}, wantAnnotations: none},
		{name: "marks the pod already carries are not written again", pod: withCondition(corev1.ConditionTrue).Label("healthy", "true").Obj(),
			wantLabels: none, wantAnnotations: none},
		{name: "a pod without the condition yet is left alone", pod: builder.Pod("p", "ns").Obj(), wantLabels: none, wantAnnotations: none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotLabels, gotAnnotations := ServerlessMarks(tt.pod, ppm)
			testkit.Diff(t, "labels", tt.wantLabels, gotLabels)
			testkit.Diff(t, "annotations", tt.wantAnnotations, gotAnnotations)
		})
	}
}
