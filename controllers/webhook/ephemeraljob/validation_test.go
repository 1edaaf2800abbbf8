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
			Name: "two containers of one name are refused",
			Change: func(j *appsv1alpha1.EphemeralJob) {
				j.Spec.Template.EphemeralContainers = append(j.Spec.Template.EphemeralContainers, j.Spec.Template.EphemeralContainers[0])
			},
			WantField: "spec.template.ephemeralContainers[1].name", WantMsg: "Duplicate",
		},
	}
	// The container rules: each row changes the one container and names its field under
	// spec.template.ephemeralContainers[0].
	for _, r := range []struct {
		name, field, msg string
		change           func(c *corev1.EphemeralContainerCommon)
	}{
		{"a container without a name is refused", "name", "Required value", func(c *corev1.EphemeralContainerCommon) { c.Name = "" }},
		{"a container name with capitals is refused", "name", "RFC 1123", func(c *corev1.EphemeralContainerCommon) { c.Name = "Debug" }},
		{"a container without an image is refused", "image", "Required value", func(c *corev1.EphemeralContainerCommon) { c.Image = "" }},
		{"an image with trailing whitespace is refused", "image", "whitespace", func(c *corev1.EphemeralContainerCommon) { c.Image = "busybox " }},
		{"an unknown pull policy is refused, listing the valid ones", "imagePullPolicy", `"Always", "IfNotPresent", "Never"`, func(c *corev1.EphemeralContainerCommon) { c.ImagePullPolicy = "Sometimes" }},
		{"an unknown termination message policy is refused", "terminationMessagePolicy", `"File", "FallbackToLogsOnError"`, func(c *corev1.EphemeralContainerCommon) { c.TerminationMessagePolicy = "Stdout" }},
		{"an env name with '=' is refused", "env[0].name", "Invalid value", func(c *corev1.EphemeralContainerCommon) { c.Env = []corev1.EnvVar{{Name: "A=B"}} }},
		{"a subPath mount is refused", "volumeMounts[0].subPath", "cannot be set for an ephemeral container", func(c *corev1.EphemeralContainerCommon) {
			c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data", SubPath: "x"}}
		}},
		{"ports are refused", "ports", "cannot be set for an ephemeral container", func(c *corev1.EphemeralContainerCommon) { c.Ports = []corev1.ContainerPort{{ContainerPort: 80}} }},
		{"resources are refused", "resources", "may set only", func(c *corev1.EphemeralContainerCommon) {
			c.Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
		}},
		{"a readiness probe is refused", "readinessProbe", "cannot be set for an ephemeral container", func(c *corev1.EphemeralContainerCommon) { c.ReadinessProbe = &corev1.Probe{} }},
		{"a lifecycle is refused", "lifecycle", "cannot be set for an ephemeral container", func(c *corev1.EphemeralContainerCommon) { c.Lifecycle = &corev1.Lifecycle{} }},
	} {
		tests = append(tests, webhooktest.Case[*appsv1alpha1.EphemeralJob]{Name: r.name, WantField: "spec.template.ephemeralContainers[0]." + r.field, WantMsg: r.msg,
			Change: func(j *appsv1alpha1.EphemeralJob) { r.change(container(j)) }})
	}
	// The counts: each row sets one count of the spec out of its range.
	for _, r := range []struct {
		name, field, msg string
		change           func(s *appsv1alpha1.EphemeralJobSpec)
	}{
		{"negative replicas are refused", "replicas", "0 or more", func(s *appsv1alpha1.EphemeralJobSpec) { s.Replicas = ptr.To[int32](-1) }},
		{"a negative parallelism is refused", "parallelism", "0 or more", func(s *appsv1alpha1.EphemeralJobSpec) { s.Parallelism = ptr.To[int32](-1) }},
		{"a zero activeDeadlineSeconds is refused", "activeDeadlineSeconds", "positive", func(s *appsv1alpha1.EphemeralJobSpec) { s.ActiveDeadlineSeconds = ptr.To[int64](0) }},
		{"a negative ttlSecondsAfterFinished is refused", "ttlSecondsAfterFinished", "0 or more", func(s *appsv1alpha1.EphemeralJobSpec) { s.TTLSecondsAfterFinished = ptr.To[int32](-1) }},
	} {
		tests = append(tests, webhooktest.Case[*appsv1alpha1.EphemeralJob]{Name: r.name, WantField: "spec." + r.field, WantMsg: r.msg,
			Change: func(j *appsv1alpha1.EphemeralJob) { r.change(&j.Spec) }})
	}
	webhooktest.RunCases(t, tests, func() *appsv1alpha1.EphemeralJob { return kinds.EphemeralJob("debug", "ns", "web").Obj() }, validateEphemeralJob)
}
