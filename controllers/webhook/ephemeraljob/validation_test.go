package ephemeraljob

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func TestValidateEphemeralJob(t *testing.T) {
	container := func(j *appsv1alpha1.EphemeralJob) *corev1.EphemeralContainerCommon {
		return &j.Spec.Template.EphemeralContainers[0].EphemeralContainerCommon
	}
	tests := []struct {
		name   string
		change func(j *appsv1alpha1.EphemeralJob)
		// wantField is the field the one error names, "" for a valid job; wantMsg is part of
		// its message.
		wantField, wantMsg string
	}{
		{name: "a selector and one container with a name and an image is valid", change: func(*appsv1alpha1.EphemeralJob) {}},
		{
			name: "set policies, env, mounts without subPath and a target container are valid",
			change: func(j *appsv1alpha1.EphemeralJob) {
				j.Spec.Template.EphemeralContainers[0].TargetContainerName = "main"
				c := container(j)
				c.ImagePullPolicy = corev1.PullIfNotPresent
				c.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
				c.Env = []corev1.EnvVar{{Name: "LEVEL", Value: "debug"}}
				c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
				c.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
			},
		},
		{
			name:      "a missing selector is refused",
			change:    func(j *appsv1alpha1.EphemeralJob) { j.Spec.Selector = nil },
			wantField: "spec.selector", wantMsg: "Required value",
		},
		{
			name: "a selector with an unknown operator is refused",
			change: func(j *appsv1alpha1.EphemeralJob) {
				j.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near", Values: []string{"web"}}}}
			},
			wantField: "spec.selector.matchExpressions[0].operator", wantMsg: "not a valid selector operator",
		},
		{
			name:      "negative replicas are refused",
			change:    func(j *appsv1alpha1.EphemeralJob) { j.Spec.Replicas = ptr.To[int32](-1) },
			wantField: "spec.replicas", wantMsg: "0 or more",
		},
		{
			name:      "a negative parallelism is refused",
			change:    func(j *appsv1alpha1.EphemeralJob) { j.Spec.Parallelism = ptr.To[int32](-1) },
			wantField: "spec.parallelism", wantMsg: "0 or more",
		},
		{
			name:      "a zero activeDeadlineSeconds is refused",
			change:    func(j *appsv1alpha1.EphemeralJob) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](0) },
			wantField: "spec.activeDeadlineSeconds", wantMsg: "positive",
		},
		{
			name:      "a negative ttlSecondsAfterFinished is refused",
			change:    func(j *appsv1alpha1.EphemeralJob) { j.Spec.TTLSecondsAfterFinished = ptr.To[int32](-1) },
			wantField: "spec.ttlSecondsAfterFinished", wantMsg: "0 or more",
		},
		{
			name:      "a container without a name is refused",
			change:    func(j *appsv1alpha1.EphemeralJob) { container(j).Name = "" },
			wantField: "spec.template.ephemeralContainers[0].name", wantMsg: "Required value",
		},
		{
			name:      "a container name with capitals is refused",
			change:    func(j *appsv1alpha1.EphemeralJob) { container(j).Name = "Debug" },
			wantField: "spec.template.ephemeralContainers[0].name", wantMsg: "RFC 1123",
		},
		{
			name: "two containers of one name are refused",
			change: func(j *appsv1alpha1.EphemeralJob) {
				j.Spec.Template.EphemeralContainers = append(j.Spec.Template.EphemeralContainers, j.Spec.Template.EphemeralContainers[0])
			},
			wantField: "spec.template.ephemeralContainers[1].name", wantMsg: "Duplicate",
		},
		{
			name:      "a container without an image is refused",
			change:    func(j *appsv1alpha1.EphemeralJob) { container(j).Image = "" },
			wantField: "spec.template.ephemeralContainers[0].image", wantMsg: "Required value",
		},
		{
			name:      "an image with trailing whitespace is refused",
			change:    func(j *appsv1alpha1.EphemeralJob) { container(j).Image = "busybox " },
			wantField: "spec.template.ephemeralContainers[0].image", wantMsg: "whitespace",
		},
		{
			name:      "an unknown pull policy is refused, listing the valid ones",
			change:    func(j *appsv1alpha1.EphemeralJob) { container(j).ImagePullPolicy = "Sometimes" },
			wantField: "spec.template.ephemeralContainers[0].imagePullPolicy", wantMsg: `"Always", "IfNotPresent", "Never"`,
		},
		{
			name:      "an unknown termination message policy is refused",
			change:    func(j *appsv1alpha1.EphemeralJob) { container(j).TerminationMessagePolicy = "Stdout" },
			wantField: "spec.template.ephemeralContainers[0].terminationMessagePolicy", wantMsg: `"File", "FallbackToLogsOnError"`,
		},
		{
			name:      "an env name with '=' is refused",
			change:    func(j *appsv1alpha1.EphemeralJob) { container(j).Env = []corev1.EnvVar{{Name: "A=B"}} },
			wantField: "spec.template.ephemeralContainers[0].env[0].name", wantMsg: "Invalid value",
		},
		{
			name: "a subPath mount is refused",
			change: func(j *appsv1alpha1.EphemeralJob) {
				container(j).VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data", SubPath: "x"}}
			},
			wantField: "spec.template.ephemeralContainers[0].volumeMounts[0].subPath", wantMsg: "cannot be set for an ephemeral container",
		},
		{
			name:      "ports are refused",
			change:    func(j *appsv1alpha1.EphemeralJob) { container(j).Ports = []corev1.ContainerPort{{ContainerPort: 80}} },
			wantField: "spec.template.ephemeralContainers[0].ports", wantMsg: "cannot be set for an ephemeral container",
		},
		{
			name: "resources are refused",
			change: func(j *appsv1alpha1.EphemeralJob) {
				container(j).Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
			},
			wantField: "spec.template.ephemeralContainers[0].resources", wantMsg: "may set only",
		},
		{
			name:      "a readiness probe is refused",
			change:    func(j *appsv1alpha1.EphemeralJob) { container(j).ReadinessProbe = &corev1.Probe{} },
			wantField: "spec.template.ephemeralContainers[0].readinessProbe", wantMsg: "cannot be set for an ephemeral container",
		},
		{
			name:      "a lifecycle is refused",
			change:    func(j *appsv1alpha1.EphemeralJob) { container(j).Lifecycle = &corev1.Lifecycle{} },
			wantField: "spec.template.ephemeralContainers[0].lifecycle", wantMsg: "cannot be set for an ephemeral container",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := kinds.EphemeralJob("debug", "ns", "web").Obj()
			tt.change(j)
			errs := validateEphemeralJob(j)
			if tt.wantField == "" {
				if len(errs) != 0 {
					t.Fatalf("want no error, got %v", errs)
				}
				return
			}
			if len(errs) != 1 {
				t.Fatalf("want one error on %s, got %v", tt.wantField, errs)
			}
			if errs[0].Field != tt.wantField || !strings.Contains(errs[0].Error(), tt.wantMsg) {
				t.Errorf("got %q on %s, want %s saying %q", errs[0].Error(), errs[0].Field, tt.wantField, tt.wantMsg)
			}
		})
	}
}
