package podprobemarker

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/features"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func valid() *kinds.PodProbeMarkerBuilder {
	return kinds.PodProbeMarker("m", "ns", "web").
		ExecProbe("healthy", "main", "game.io/healthy", "cat", "/ok").
		Marker(appsv1alpha1.ProbeSucceeded, "healthy", "true").
		AnnotationMarker(appsv1alpha1.ProbeFailed, "example.com/unhealthy", "yes")
}

func TestValidatePodProbeMarker(t *testing.T) {
	edit := func(f func(*appsv1alpha1.PodProbeMarker)) *appsv1alpha1.PodProbeMarker { return valid().Edit(f).Obj() }
	probe0 := func(f func(*appsv1alpha1.PodContainerProbe)) *appsv1alpha1.PodProbeMarker {
		return edit(func(m *appsv1alpha1.PodProbeMarker) { f(&m.Spec.Probes[0]) })
	}
	cases := map[string]struct {
		ppm  *appsv1alpha1.PodProbeMarker
		old  *appsv1alpha1.PodProbeMarker
		want []string
	}{
		"an exec probe with a condition and both policies is valid": {ppm: valid().Obj()},
		"a tcp probe on a named port is valid": {ppm: kinds.PodProbeMarker("m", "ns", "web").
			TCPProbe("port", "main", "game.io/port", intstr.FromString("http")).Obj()},
		"a missing selector is refused": {
			ppm: edit(func(m *appsv1alpha1.PodProbeMarker) { m.Spec.Selector = nil }), want: []string{"FieldValueRequired spec.selector"}},
		"an empty selector, which would probe every pod, is refused": {
			ppm: edit(func(m *appsv1alpha1.PodProbeMarker) { m.Spec.Selector = &metav1.LabelSelector{} }), want: []string{"FieldValueRequired spec.selector"}},
		"a changed selector is refused on update": {
			ppm: edit(func(m *appsv1alpha1.PodProbeMarker) { m.Spec.Selector.MatchLabels["app"] = "db" }), old: valid().Obj(),
			want: []string{"FieldValueForbidden spec.selector"}},
		"no probes is refused": {
			ppm: edit(func(m *appsv1alpha1.PodProbeMarker) { m.Spec.Probes = nil }), want: []string{"FieldValueRequired spec.probes"}},
		"duplicate probe names are refused": {
			ppm: edit(func(m *appsv1alpha1.PodProbeMarker) {
				p := m.Spec.Probes[0]
				p.PodConditionType = "other"
				m.Spec.Probes = append(m.Spec.Probes, p)
			}), want: []string{"FieldValueDuplicate spec.probes[1].name"}},
		"a probe name with '#' is refused":               {ppm: probe0(func(p *appsv1alpha1.PodContainerProbe) { p.Name = "a#b" }), want: []string{"FieldValueInvalid spec.probes[0].name"}},
		"a probe named after a pod condition is refused": {ppm: probe0(func(p *appsv1alpha1.PodContainerProbe) { p.Name = "Ready" }), want: []string{"FieldValueInvalid spec.probes[0].name"}},
		"a probe without a container name is refused": {
			ppm: probe0(func(p *appsv1alpha1.PodContainerProbe) { p.ContainerName = "" }), want: []string{"FieldValueRequired spec.probes[0].containerName"}},
		"a probe with no handler is refused": {
			ppm: probe0(func(p *appsv1alpha1.PodContainerProbe) { p.Probe.Exec = nil }), want: []string{"FieldValueRequired spec.probes[0].probe"}},
		"a probe with two handlers is refused": {
			ppm: probe0(func(p *appsv1alpha1.PodContainerProbe) {
				p.Probe.TCPSocket = &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}
			}), want: []string{"FieldValueForbidden spec.probes[0].probe"}},
		"an httpGet probe is refused, as in 1.8": {
			ppm: probe0(func(p *appsv1alpha1.PodContainerProbe) {
				p.Probe.Exec, p.Probe.HTTPGet = nil, &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}
			}), want: []string{"FieldValueForbidden spec.probes[0].probe.httpGet"}},
		"an exec probe without a command is refused": {
			ppm: probe0(func(p *appsv1alpha1.PodContainerProbe) { p.Probe.Exec.Command = nil }), want: []string{"FieldValueRequired spec.probes[0].probe.exec.command"}},
		"a tcp port out of range is refused": {
			ppm: probe0(func(p *appsv1alpha1.PodContainerProbe) {
				p.Probe.Exec, p.Probe.TCPSocket = nil, &corev1.TCPSocketAction{Port: intstr.FromInt32(70000)}
			}), want: []string{"FieldValueInvalid spec.probes[0].probe.tcpSocket.port"}},
		"a negative period is refused": {
			ppm: probe0(func(p *appsv1alpha1.PodContainerProbe) { p.Probe.PeriodSeconds = -1 }), want: []string{"FieldValueInvalid spec.probes[0].probe.periodSeconds"}},
		"a probe marking nothing is refused": {
			ppm: probe0(func(p *appsv1alpha1.PodContainerProbe) { p.PodConditionType, p.MarkerPolicy = "", nil }), want: []string{"FieldValueRequired spec.probes[0]"}},
		"an invalid condition type is refused": {
			ppm: probe0(func(p *appsv1alpha1.PodContainerProbe) { p.PodConditionType = "not valid!" }), want: []string{"FieldValueInvalid spec.probes[0].podConditionType"}},
		"a condition type used by two probes is refused": {
			ppm: edit(func(m *appsv1alpha1.PodProbeMarker) {
				p := m.Spec.Probes[0]
				p.Name = "second"
				m.Spec.Probes = append(m.Spec.Probes, p)
			}), want: []string{"FieldValueDuplicate spec.probes[1].podConditionType"}},
		"a policy for the Unknown state is refused": {
			ppm:  probe0(func(p *appsv1alpha1.PodContainerProbe) { p.MarkerPolicy[0].State = appsv1alpha1.ProbeUnknown }),
			want: []string{"FieldValueNotSupported spec.probes[0].markerPolicy[0].state"}},
		"two policies for one state are refused": {
			ppm:  probe0(func(p *appsv1alpha1.PodContainerProbe) { p.MarkerPolicy[1].State = appsv1alpha1.ProbeSucceeded }),
			want: []string{"FieldValueDuplicate spec.probes[0].markerPolicy[1].state"}},
		"a policy with neither labels nor annotations is refused": {
			ppm:  probe0(func(p *appsv1alpha1.PodContainerProbe) { p.MarkerPolicy[0].Labels = nil }),
			want: []string{"FieldValueRequired spec.probes[0].markerPolicy[0]"}},
		"an invalid label is refused": {
			ppm: probe0(func(p *appsv1alpha1.PodContainerProbe) {
				p.MarkerPolicy[0].Labels = map[string]string{"healthy": "not valid!"}
			}),
			want: []string{"FieldValueInvalid spec.probes[0].markerPolicy[0].labels"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, webhooktest.TypedFields(validatePodProbeMarker(tc.ppm, tc.old))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHandlerGates(t *testing.T) {
	raw, err := json.Marshal(valid().Obj())
	if err != nil {
		t.Fatal(err)
	}
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw}}}
	cases := map[string]struct {
		gates       string
		wantAllowed bool
	}{
		"a valid marker passes with the default gates":  {wantAllowed: true},
		"it is refused while PodProbeMarkerGate is off": {gates: "PodProbeMarkerGate=false"},
		"it is refused while KruiseDaemon is off":       {gates: "KruiseDaemon=false"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			g := features.NewGate()
			if tc.gates != "" {
				if err := g.Set(tc.gates); err != nil {
					t.Fatal(err)
				}
			}
			resp := NewHandler(g).Handle(context.Background(), req)
			if resp.Allowed != tc.wantAllowed {
				t.Errorf("allowed = %v, want %v (%v)", resp.Allowed, tc.wantAllowed, resp.Result)
			}
			if !tc.wantAllowed && resp.Result.Code != http.StatusForbidden {
				t.Errorf("code = %d, want %d", resp.Result.Code, http.StatusForbidden)
			}
		})
	}
}
