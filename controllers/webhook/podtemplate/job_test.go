package podtemplate

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

func TestValidateJob(t *testing.T) {
	tests := []webhooktest.Case[*corev1.PodTemplateSpec]{
		{Name: "one named container with an image that never restarts is valid", Change: func(*corev1.PodTemplateSpec) {}},
		{
			Name:   "restartPolicy OnFailure is valid",
			Change: func(t *corev1.PodTemplateSpec) { t.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
		},
		{
			Name:      "an empty restartPolicy is refused: a job's pod must say how it ends",
			Change:    func(t *corev1.PodTemplateSpec) { t.Spec.RestartPolicy = "" },
			WantField: "template.spec.restartPolicy", WantMsg: `"Never", "OnFailure"`,
		},
		{
			Name:      "an invalid label value is refused",
			Change:    func(t *corev1.PodTemplateSpec) { t.Labels = map[string]string{"app": "a b"} },
			WantField: "template.metadata.labels", WantMsg: "Invalid value",
		},
		{
			Name: "an init container sharing a container's name is refused",
			Change: func(t *corev1.PodTemplateSpec) {
				t.Spec.InitContainers = []corev1.Container{{Name: "main", Image: "busybox"}}
			},
			WantField: "template.spec.containers[0].name", WantMsg: "Duplicate",
		},
		{
			Name:      "a container without an image is refused",
			Change:    func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "" },
			WantField: "template.spec.containers[0].image", WantMsg: "Required value",
		},
	}
	valid := func() *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "scan"}},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
			},
		}
	}
	webhooktest.RunCases(t, tests, valid, func(t *corev1.PodTemplateSpec) field.ErrorList { return ValidateJob(t, field.NewPath("template")) })
}
