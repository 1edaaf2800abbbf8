package cloneset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func TestSetDefaultsStrategy(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*appsv1alpha1.CloneSet)
		want   func(*appsv1alpha1.CloneSetSpec)
	}{
		{
			name:   "an empty spec gets one replica, ten revisions, ReCreate, partition 0, maxUnavailable 20% and maxSurge 0",
			mutate: func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = nil },
			want:   func(*appsv1alpha1.CloneSetSpec) {},
		},
		{
			name: "set values are kept",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.Replicas = ptr.To[int32](4)
				cs.Spec.RevisionHistoryLimit = ptr.To[int32](2)
				cs.Spec.UpdateStrategy = appsv1alpha1.CloneSetUpdateStrategy{
					Type:           appsv1alpha1.RecreateCloneSetUpdateStrategyType,
					Partition:      ptr.To(intstr.FromString("50%")),
					MaxUnavailable: ptr.To(intstr.FromInt32(2)),
					MaxSurge:       ptr.To(intstr.FromInt32(1)),
				}
			},
			want: func(s *appsv1alpha1.CloneSetSpec) {
				s.Replicas = ptr.To[int32](4)
				s.RevisionHistoryLimit = ptr.To[int32](2)
				s.UpdateStrategy.Partition = ptr.To(intstr.FromString("50%"))
				s.UpdateStrategy.MaxUnavailable = ptr.To(intstr.FromInt32(2))
				s.UpdateStrategy.MaxSurge = ptr.To(intstr.FromInt32(1))
			},
		},
		{
			name: "an in-place type gets an empty inPlaceUpdateStrategy",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.Type = appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType
			},
			want: func(s *appsv1alpha1.CloneSetSpec) {
				s.UpdateStrategy.Type = appsv1alpha1.InPlaceIfPossibleCloneSetUpdateStrategyType
				s.UpdateStrategy.InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{}
			},
		},
		{
			name: "an in-place type keeps its grace period",
			mutate: func(cs *appsv1alpha1.CloneSet) {
				cs.Spec.UpdateStrategy.Type = appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
				cs.Spec.UpdateStrategy.InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{GracePeriodSeconds: 10}
			},
			want: func(s *appsv1alpha1.CloneSetSpec) {
				s.UpdateStrategy.Type = appsv1alpha1.InPlaceOnlyCloneSetUpdateStrategyType
				s.UpdateStrategy.InPlaceUpdateStrategy = &appspub.InPlaceUpdateStrategy{GracePeriodSeconds: 10}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := kinds.CloneSet("web", "ns").Obj()
			tt.mutate(cs)
			setDefaults(cs, false)

			want := kinds.CloneSet("web", "ns").Obj().Spec
			want.RevisionHistoryLimit = ptr.To[int32](10)
			want.UpdateStrategy = appsv1alpha1.CloneSetUpdateStrategy{
				Type:           appsv1alpha1.RecreateCloneSetUpdateStrategyType,
				Partition:      ptr.To(intstr.FromInt32(0)),
				MaxUnavailable: ptr.To(intstr.FromString("20%")),
				MaxSurge:       ptr.To(intstr.FromInt32(0)),
			}
			tt.want(&want)
			if diff := cmp.Diff(want, cs.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetDefaultsTemplate(t *testing.T) {
	tests := []struct {
		name string
		in   corev1.PodSpec
		want corev1.PodSpec
	}{
		{
			name: "a bare pod spec gets the pod-level and container defaults",
			in:   corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example.com/app:1"}}},
			want: withPodDefaults(corev1.PodSpec{
				Containers: []corev1.Container{defaulted("main", "registry.example.com/app:1", corev1.PullIfNotPresent)},
			}),
		},
		{
			name: "untagged and latest images are pulled Always, digests IfNotPresent",
			in: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "init", Image: "registry.example.com:5000/app"}},
				Containers: []corev1.Container{
					{Name: "a", Image: "app:latest"},
					{Name: "b", Image: "registry.example.com/app@sha256:0123"},
				},
			},
			want: withPodDefaults(corev1.PodSpec{
				InitContainers: []corev1.Container{defaulted("init", "registry.example.com:5000/app", corev1.PullAlways)},
				Containers:     []corev1.Container{defaulted("a", "app:latest", corev1.PullAlways), defaulted("b", "registry.example.com/app@sha256:0123", corev1.PullIfNotPresent)},
			}),
		},
		{
			name: "an empty image, to be filled in later, is pulled IfNotPresent",
			in:   corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}},
			want: withPodDefaults(corev1.PodSpec{
				Containers: []corev1.Container{defaulted("main", "", corev1.PullIfNotPresent)},
			}),
		},
		{
			name: "ports, probes, field refs and volumes get their defaults; host network copies ports",
			in: corev1.PodSpec{
				HostNetwork: true,
				Containers: []corev1.Container{{
					Name: "main", Image: "app:1",
					Ports:          []corev1.ContainerPort{{ContainerPort: 8080}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(8080)}}},
					Env:            []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
				}},
				Volumes: []corev1.Volume{
					{Name: "scratch"},
					{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}}},
					{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var"}}},
				},
			},
			want: withPodDefaults(corev1.PodSpec{
				HostNetwork: true,
				Containers: []corev1.Container{func() corev1.Container {
					c := defaulted("main", "app:1", corev1.PullIfNotPresent)
					c.Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
					c.ReadinessProbe = &corev1.Probe{
						ProbeHandler:   corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(8080), Path: "/", Scheme: corev1.URISchemeHTTP}},
						TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
					}
					c.Env = []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName", APIVersion: "v1"}}}}
					return c
				}()},
				Volumes: []corev1.Volume{
					{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, DefaultMode: ptr.To[int32](0o644)}}},
					{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var", Type: ptr.To(corev1.HostPathUnset)}}},
				},
			}),
		},
		{
			name: "set pod-level values are kept",
			in:   keptPodValues(),
			want: keptPodValues(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := kinds.CloneSet("web", "ns").Obj()
			cs.Spec.Template.Spec = tt.in
			setDefaults(cs, true)
			if diff := cmp.Diff(tt.want, cs.Spec.Template.Spec); diff != "" {
				t.Errorf("template spec (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetDefaultsLeavesTheTemplateAloneWhenAsked(t *testing.T) {
	cs := kinds.CloneSet("web", "ns").Obj()
	want := cs.Spec.Template.DeepCopy()
	setDefaults(cs, false)
	if diff := cmp.Diff(*want, cs.Spec.Template); diff != "" {
		t.Errorf("template (-want +got):\n%s", diff)
	}
}

func TestSetDefaultsVolumeClaimTemplates(t *testing.T) {
	cs := kinds.CloneSet("web", "ns").Obj()
	cs.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}
	setDefaults(cs, true)
	want := []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec:       corev1.PersistentVolumeClaimSpec{VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem)},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}}
	if diff := cmp.Diff(want, cs.Spec.VolumeClaimTemplates); diff != "" {
		t.Errorf("volume claim templates (-want +got):\n%s", diff)
	}
}

// withPodDefaults is spec with the pod-level defaults a bare pod spec gets.
func withPodDefaults(spec corev1.PodSpec) corev1.PodSpec {
	spec.RestartPolicy, spec.DNSPolicy, spec.SchedulerName = corev1.RestartPolicyAlways, corev1.DNSClusterFirst, corev1.DefaultSchedulerName
	spec.SecurityContext, spec.TerminationGracePeriodSeconds = &corev1.PodSecurityContext{}, ptr.To[int64](30)
	return spec
}

// keptPodValues is a pod spec whose pod-level values are all set, to other values than the
// defaults.
func keptPodValues() corev1.PodSpec {
	return corev1.PodSpec{
		Containers:                    []corev1.Container{defaulted("main", "app:1", corev1.PullNever)},
		RestartPolicy:                 corev1.RestartPolicyAlways,
		DNSPolicy:                     corev1.DNSDefault,
		SecurityContext:               &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)},
		TerminationGracePeriodSeconds: ptr.To[int64](5),
		SchedulerName:                 "custom",
	}
}

func defaulted(name, image string, pull corev1.PullPolicy) corev1.Container {
	return corev1.Container{
		Name: name, Image: image, ImagePullPolicy: pull,
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}
}
