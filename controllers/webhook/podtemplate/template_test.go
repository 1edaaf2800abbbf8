package podtemplate

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kruise-addon/kruise-addon/controllers/webhook/webhooktest"
)

func TestValidateWorkload(t *testing.T) {
	noReadWrite := func(vp *field.Path, v *corev1.Volume) field.ErrorList {
		if v.HostPath != nil {
			return field.ErrorList{field.Forbidden(vp.Child("hostPath"), "no host paths here")}
		}
		return nil
	}
	tests := []struct {
		name               string
		change             func(t *corev1.PodTemplateSpec, r *Rules)
		wantField, wantMsg string
	}{
		{name: "an unset restartPolicy is valid for a workload", change: func(*corev1.PodTemplateSpec, *Rules) {}},
		{
			name:      "restartPolicy Never is refused for a workload, naming Always",
			change:    func(t *corev1.PodTemplateSpec, _ *Rules) { t.Spec.RestartPolicy = corev1.RestartPolicyNever },
			wantField: "template.spec.restartPolicy", wantMsg: `supported values: "Always"`,
		},
		{
			name:      "activeDeadlineSeconds is refused with the kind's reason",
			change:    func(t *corev1.PodTemplateSpec, _ *Rules) { t.Spec.ActiveDeadlineSeconds = new(int64) },
			wantField: "template.spec.activeDeadlineSeconds", wantMsg: "runs forever",
		},
		{
			name: "a mount of a volume claim template's name is valid",
			change: func(t *corev1.PodTemplateSpec, r *Rules) {
				t.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data"}}
				r.Claims = []string{"data"}
			},
		},
		{
			name: "a mount of no volume is refused",
			change: func(t *corev1.PodTemplateSpec, _ *Rules) {
				t.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data"}}
			},
			wantField: "template.spec.containers[0].volumeMounts[0].name", wantMsg: "Not found",
		},
		{
			name: "two volumes of one name are refused",
			change: func(t *corev1.PodTemplateSpec, _ *Rules) {
				t.Spec.Volumes = []corev1.Volume{{Name: "a"}, {Name: "a"}}
			},
			wantField: "template.spec.volumes[1].name", wantMsg: "Duplicate",
		},
		{
			name: "the kind's own volume rule is asked of each volume under its path",
			change: func(t *corev1.PodTemplateSpec, r *Rules) {
				t.Spec.Volumes = []corev1.Volume{{Name: "a", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
				r.Volume = noReadWrite
			},
			wantField: "template.spec.volumes[0].hostPath", wantMsg: "no host paths here",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}},
			}
			r := Workload("must be unset: it runs forever")
			tt.change(tmpl, &r)
			webhooktest.AssertOneError(t, Validate(tmpl, field.NewPath("template"), r), tt.wantField, tt.wantMsg)
		})
	}
}

func TestValidateSelector(t *testing.T) {
	words := SelectorRules{Required: "a selector", Empty: "not empty", Mismatch: "must match %q", Unparsed: true}
	tests := []struct {
		name               string
		sel                *metav1.LabelSelector
		rules              SelectorRules
		wantField, wantMsg string
	}{
		{name: "a selector that matches the template's labels is valid", sel: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, rules: words},
		{name: "a missing selector is required in the kind's words", rules: words, wantField: "spec.selector", wantMsg: "a selector"},
		{name: "an empty selector is refused in the kind's words", sel: &metav1.LabelSelector{}, rules: words, wantField: "spec.selector", wantMsg: "not empty"},
		{
			name: "a selector that misses the labels is refused on them, naming the selector", sel: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			rules: words, wantField: "spec.template.metadata.labels", wantMsg: `must match "app=db"`,
		},
		{
			name: "a mismatch reason without %q is kept as it is", sel: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			rules: SelectorRules{Mismatch: "must match 100%"}, wantField: "spec.template.metadata.labels", wantMsg: "must match 100%",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := ValidateSelector(tt.sel, map[string]string{"app": "web"}, field.NewPath("spec"), tt.rules)
			webhooktest.AssertOneError(t, errs, tt.wantField, tt.wantMsg)
		})
	}
}
