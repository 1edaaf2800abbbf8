package kinds

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// PodProbeMarkerBuilder builds an apps.kruise.io/v1alpha1 PodProbeMarker.
type PodProbeMarkerBuilder struct {
	obj *appsv1alpha1.PodProbeMarker
}

// PodProbeMarker starts a PodProbeMarker selecting "app: <app>", with no probes.
func PodProbeMarker(name, namespace, app string) *PodProbeMarkerBuilder {
	return &PodProbeMarkerBuilder{obj: &appsv1alpha1.PodProbeMarker{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1alpha1.PodProbeMarkerSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		},
	}}
}

// ExecProbe adds a probe running command in container, every second, with the given
// condition type ("" for none).
func (b *PodProbeMarkerBuilder) ExecProbe(name, container, conditionType string, command ...string) *PodProbeMarkerBuilder {
	return b.probe(name, container, conditionType, corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: command}})
}

// TCPProbe adds a probe connecting to port of the pod IP, every second.
func (b *PodProbeMarkerBuilder) TCPProbe(name, container, conditionType string, port intstr.IntOrString) *PodProbeMarkerBuilder {
	return b.probe(name, container, conditionType, corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: port}})
}

func (b *PodProbeMarkerBuilder) probe(name, container, conditionType string, h corev1.ProbeHandler) *PodProbeMarkerBuilder {
	b.obj.Spec.Probes = append(b.obj.Spec.Probes, appsv1alpha1.PodContainerProbe{
		Name: name, ContainerName: container, PodConditionType: conditionType,
		Probe: appsv1alpha1.ContainerProbeSpec{Probe: corev1.Probe{ProbeHandler: h, PeriodSeconds: 1}},
	})
	return b
}

// Marker adds to the last probe a markerPolicy putting labels (k1, v1, k2, v2, ...) on the
// pod in state.
func (b *PodProbeMarkerBuilder) Marker(state appsv1alpha1.ProbeState, labels ...string) *PodProbeMarkerBuilder {
	return b.marker(state, pairs(labels), nil)
}

// AnnotationMarker adds to the last probe a markerPolicy putting annotations (k1, v1, ...) on
// the pod in state.
func (b *PodProbeMarkerBuilder) AnnotationMarker(state appsv1alpha1.ProbeState, annotations ...string) *PodProbeMarkerBuilder {
	return b.marker(state, nil, pairs(annotations))
}

func (b *PodProbeMarkerBuilder) marker(state appsv1alpha1.ProbeState, labels, annotations map[string]string) *PodProbeMarkerBuilder {
	p := &b.obj.Spec.Probes[len(b.obj.Spec.Probes)-1]
	p.MarkerPolicy = append(p.MarkerPolicy, appsv1alpha1.ProbeMarkerPolicy{State: state, Labels: labels, Annotations: annotations})
	return b
}

// Edit applies f to the marker being built, for what no other method sets.
func (b *PodProbeMarkerBuilder) Edit(f func(*appsv1alpha1.PodProbeMarker)) *PodProbeMarkerBuilder {
	f(b.obj)
	return b
}

// Obj returns the PodProbeMarker.
func (b *PodProbeMarkerBuilder) Obj() *appsv1alpha1.PodProbeMarker { return b.obj.DeepCopy() }

func pairs(kv []string) map[string]string {
	if len(kv) == 0 {
		return nil
	}
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}
