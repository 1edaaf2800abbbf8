package podtemplate

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateJob(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *corev1.PodTemplateSpec)
		// wantField is the field the one error names, "" for a valid template; wantMsg is part
		// of its message.
		wantField, wantMsg string
	}{
		{name: "one named container with an image that never restarts is valid", change: func(*corev1.PodTemplateSpec) {}},
		{
			name:   "restartPolicy OnFailure is valid",
			change: func(t *corev1.PodTemplateSpec) { t.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
		},
		{
			name:      "an empty restartPolicy is refused: a job's pod must say how it ends",
			change:    func(t *corev1.PodTemplateSpec) { t.Spec.RestartPolicy = "" },
			wantField: "template.spec.restartPolicy", wantMsg: `"Never", "OnFailure"`,
		},
		{
			name:      "an invalid label value is refused",
			change:    func(t *corev1.PodTemplateSpec) { t.Labels = map[string]string{"app": "a b"} },
			wantField: "template.metadata.labels", wantMsg: "Invalid value",
		},
		{
			name: "an init container sharing a container's name is refused",
			change: func(t *corev1.PodTemplateSpec) {
				t.Spec.InitContainers = []corev1.Container{{Name: "main", Image: "busybox"}}
			},
			wantField: "template.spec.containers[0].name", wantMsg: "Duplicate",
		},
		{
			name:      "a container without an image is refused",
			change:    func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "" },
			wantField: "template.spec.containers[0].image", wantMsg: "Required value",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "scan"}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
				},
			}
			tt.change(tmpl)
			assertOne(t, ValidateJob(tmpl, field.NewPath("template")), tt.wantField, tt.wantMsg)
		})
	}
}

// assertOne fails t unless errs is empty when wantField is, or holds one error on wantField
// whose message holds wantMsg.
func assertOne(t *testing.T, errs field.ErrorList, wantField, wantMsg string) {
	t.Helper()
	if wantField == "" {
		if len(errs) != 0 {
			t.Fatalf("want no error, got %v", errs)
		}
		return
	}
	if len(errs) != 1 {
		t.Fatalf("want one error on %s, got %v", wantField, errs)
	}
	if errs[0].Field != wantField || !strings.Contains(errs[0].Error(), wantMsg) {
		t.Errorf("got %q on %s, want %s saying %q", errs[0].Error(), errs[0].Field, wantField, wantMsg)
	}
}
