package ephemeraljob

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

func TestValidateEphemeralJob(t *testing.T) {
	container := func(j *appsv1alpha1.EphemeralJob) *corev1.EphemeralContainerCommon {
		return &j.Spec.Template.EphemeralContainers[0].EphemeralContainerCommon
	}
	tests := []webhooktest.Case[*appsv1alpha1.EphemeralJob]{
		{Name: "a selector and one container with a name and an image is valid", Change: func(*appsv1alpha1.EphemeralJob) {}},
		{
			Name: "set policies, env, mounts without subPath and a target container are valid",
			Change: func(j *appsv1alpha1.EphemeralJob) {
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
			Name:      "a missing selector is refused",
			Change:    func(j *appsv1alpha1.EphemeralJob) { j.Spec.Selector = nil },
			WantField: "spec.selector", WantMsg: "Required value",
		},
		{
			Name: "a selector with an unknown operator is refused",
			Change: func(j *appsv1alpha1.EphemeralJob) {
				j.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near", Values: []string{"web"}}}}
			},
			WantField: "spec.selector.matchExpressions[0].operator", WantMsg: "not a valid selector operator",
		},
		{
			Name:      "negative replicas are refused",
			Change:    func(j *appsv1alpha1.EphemeralJob) { j.Spec.Replicas = ptr.To[int32](-1) },
			WantField: "spec.replicas", WantMsg: "0 or more",
		},
		{
			Name:      "a negative parallelism is refused",
			Change:    func(j *appsv1alpha1.EphemeralJob) { j.Spec.Parallelism = ptr.To[int32](-1) },
			WantField: "spec.parallelism", WantMsg: "0 or more",
		},
		{
			Name:      "a zero activeDeadlineSeconds is refused",
			Change:    func(j *appsv1alpha1.EphemeralJob) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](0) },
			WantField: "spec.activeDeadlineSeconds", WantMsg: "positive",
		},
		{
			Name:      "a negative ttlSecondsAfterFinished is refused",
			Change:    func(j *appsv1alpha1.EphemeralJob) { j.Spec.TTLSecondsAfterFinished = ptr.To[int32](-1) },
			WantField: "spec.ttlSecondsAfterFinished", WantMsg: "0 or more",
		},
		{
			Name:      "a container without a name is refused",
			Change:    func(j *appsv1alpha1.EphemeralJob) { container(j).Name = "" },
			WantField: "spec.template.ephemeralContainers[0].name", WantMsg: "Required value",
		},
		{
			Name:      "a container name with capitals is refused",
			Change:    func(j *appsv1alpha1.EphemeralJob) { container(j).Name = "Debug" },
			WantField: "spec.template.ephemeralContainers[0].name", WantMsg: "RFC 1123",
		},
		{
			Name: "two containers of one name are refused",
			Change: func(j *appsv1alpha1.EphemeralJob) {
				j.Spec.Template.EphemeralContainers = append(j.Spec.Template.EphemeralContainers, j.Spec.Template.EphemeralContainers[0])
			},
			WantField: "spec.template.ephemeralContainers[1].name", WantMsg: "Duplicate",
		},
		{
			Name:      "a container without an image is refused",
			Change:    func(j *appsv1alpha1.EphemeralJob) { container(j).Image = "" },
			WantField: "spec.template.ephemeralContainers[0].image", WantMsg: "Required value",
		},
		{
			Name:      "an image with trailing whitespace is refused",
			Change:    func(j *appsv1alpha1.EphemeralJob) { container(j).Image = "busybox " },
			WantField: "spec.template.ephemeralContainers[0].image", WantMsg: "whitespace",
		},
		{
			Name:      "an unknown pull policy is refused, listing the valid ones",
			Change:    func(j *appsv1alpha1.EphemeralJob) { container(j).ImagePullPolicy = "Sometimes" },
			WantField: "spec.template.ephemeralContainers[0].imagePullPolicy", WantMsg: `"Always", "IfNotPresent", "Never"`,
		},
		{
			Name:      "an unknown termination message policy is refused",
			Change:    func(j *appsv1alpha1.EphemeralJob) { container(j).TerminationMessagePolicy = "Stdout" },
			WantField: "spec.template.ephemeralContainers[0].terminationMessagePolicy", WantMsg: `"File", "FallbackToLogsOnError"`,
		},
		{
			Name:      "an env name with '=' is refused",
			Change:    func(j *appsv1alpha1.EphemeralJob) { container(j).Env = []corev1.EnvVar{{Name: "A=B"}} },
			WantField: "spec.template.ephemeralContainers[0].env[0].name", WantMsg: "Invalid value",
		},
		{
			Name: "a subPath mount is refused",
			Change: func(j *appsv1alpha1.EphemeralJob) {
				container(j).VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data", SubPath: "x"}}
			},
			WantField: "spec.template.ephemeralContainers[0].volumeMounts[0].subPath", WantMsg: "cannot be set for an ephemeral container",
		},
		{
			Name:      "ports are refused",
			Change:    func(j *appsv1alpha1.EphemeralJob) { container(j).Ports = []corev1.ContainerPort{{ContainerPort: 80}} },
			WantField: "spec.template.ephemeralContainers[0].ports", WantMsg: "cannot be set for an ephemeral container",
		},
		{
			Name: "resources are refused",
			Change: func(j *appsv1alpha1.EphemeralJob) {
				container(j).Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
			},
			WantField: "spec.template.ephemeralContainers[0].resources", WantMsg: "may set only",
		},
		{
			Name:      "a readiness probe is refused",
			Change:    func(j *appsv1alpha1.EphemeralJob) { container(j).ReadinessProbe = &corev1.Probe{} },
			WantField: "spec.template.ephemeralContainers[0].readinessProbe", WantMsg: "cannot be set for an ephemeral container",
		},
		{
			Name:      "a lifecycle is refused",
			Change:    func(j *appsv1alpha1.EphemeralJob) { container(j).Lifecycle = &corev1.Lifecycle{} },
			WantField: "spec.template.ephemeralContainers[0].lifecycle", WantMsg: "cannot be set for an ephemeral container",
		},
	}
	webhooktest.RunCases(t, tests, func() *appsv1alpha1.EphemeralJob { return kinds.EphemeralJob("debug", "ns", "web").Obj() }, validateEphemeralJob)
}
