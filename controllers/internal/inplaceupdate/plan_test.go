package inplaceupdate

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func template(mutate ...func(*corev1.PodTemplateSpec)) *corev1.PodTemplateSpec {
	t := &corev1.PodTemplateSpec{}
	t.Labels = map[string]string{"app": "web"}
	t.Spec.Containers = []corev1.Container{
		{Name: "main", Image: "web:1", Env: []corev1.EnvVar{{Name: "ZONE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['zone']"}}}}},
		{Name: "side", Image: "side:1"},
	}
	for _, m := range mutate {
		m(t)
	}
	return t
}

func rev(name string, t *corev1.PodTemplateSpec) *appsv1.ControllerRevision {
	raw, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": t}})
	r := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: raw}}
	r.Name = name
	return r
}

func TestPlanUpdate(t *testing.T) {
	tests := map[string]struct {
		next     *corev1.PodTemplateSpec
		opts     Options
		wantOK   bool
		wantPlan *Plan
	}{
		"an image change goes in place": {
			next:     template(func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "web:2" }),
			wantOK:   true,
			wantPlan: &Plan{Revision: "v2", ContainerImages: map[string]string{"main": "web:2"}},
		},
		"two image changes go in place in one step": {
			next: template(func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Image = "web:2"
				t.Spec.Containers[1].Image = "side:2"
			}),
			wantOK:   true,
			wantPlan: &Plan{Revision: "v2", ContainerImages: map[string]string{"main": "web:2", "side": "side:2"}},
		},
		"a label and annotation change goes in place": {
			next: template(func(t *corev1.PodTemplateSpec) {
				t.Labels = map[string]string{"app": "web", "tier": "front"}
				t.Annotations = map[string]string{"note": "x"}
			}),
			wantOK:   true,
			wantPlan: &Plan{Revision: "v2", Labels: map[string]*string{"tier": ptr.To("front")}, Annotations: map[string]*string{"note": ptr.To("x")}},
		},
		"a removed label is removed in place": {
			next:     template(func(t *corev1.PodTemplateSpec) { t.Labels = nil }),
			wantOK:   true,
			wantPlan: &Plan{Revision: "v2", Labels: map[string]*string{"app": nil}},
		},
		"an env change needs a new pod": {
			next: template(func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[1].Env = []corev1.EnvVar{{Name: "A", Value: "b"}}
			}),
		},
		"a command change needs a new pod": {
			next: template(func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Command = []string{"sh"} }),
		},
		"an image change with a command change needs a new pod": {
			next: template(func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers[0].Image = "web:2"
				t.Spec.Containers[0].Command = []string{"sh"}
			}),
		},
		"an added container needs a new pod": {
			next: template(func(t *corev1.PodTemplateSpec) {
				t.Spec.Containers = append(t.Spec.Containers, corev1.Container{Name: "x", Image: "x"})
			}),
		},
		"a label read by an env fieldRef needs a new pod without the gate": {
			next: template(func(t *corev1.PodTemplateSpec) { t.Labels["zone"] = "a" }),
		},
		"a label read by an env fieldRef goes in place with the gate, recorded against the container that reads it": {
			next:   template(func(t *corev1.PodTemplateSpec) { t.Labels["zone"] = "a" }),
			opts:   Options{EnvFromMetadata: true},
			wantOK: true,
			wantPlan: &Plan{Revision: "v2", Labels: map[string]*string{"zone": ptr.To("a")}, UpdateEnvFromMetadata: true,
				ContainerRefMetadata: map[string]metav1.ObjectMeta{"main": {Labels: map[string]string{"zone": "a"}}}},
		},
		"the grace period is carried into the plan": {
			next:     template(func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = "web:2" }),
			opts:     Options{GraceSeconds: 10},
			wantOK:   true,
			wantPlan: &Plan{Revision: "v2", ContainerImages: map[string]string{"main": "web:2"}, GraceSeconds: 10},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			plan, ok, err := PlanUpdate(rev("v1", template()), rev("v2", tc.next), SpecTemplate, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.wantOK {
				t.Fatalf("in place = %v, want %v", ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.wantPlan, plan); diff != "" {
				t.Fatalf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompleted(t *testing.T) {
	pod := func(image, imageID string) *corev1.Pod {
		p := &corev1.Pod{}
		p.Spec.Containers = []corev1.Container{{Name: "main", Image: "web:2"}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: image, ImageID: imageID}}
		return p
	}
	state := stateWith("main", "sha256:old")
	tests := map[string]struct {
		pod  *corev1.Pod
		want bool
	}{
		"the same image ID is not finished":                                                {pod: pod("web:1", "sha256:old")},
		"the same image ID with the new image reported is finished: two tags of one image": {pod: pod("web:2", "sha256:old"), want: true},
		"the same image ID with no status image is not finished":                           {pod: pod("", "sha256:old")},
		"a new image ID with the new image is finished":                                    {pod: pod("web:2", "sha256:new"), want: true},
		"a new image ID reported with the default registry":                                {pod: pod(name.DefaultRegistry+"/library/web:2", "sha256:new"), want: true},
		"a new image ID but still the old image is not done":                               {pod: pod("web:1", "sha256:new")},
		"an empty image ID is not finished":                                                {pod: pod("web:2", "")},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Completed(tc.pod, state); got != tc.want {
				t.Fatalf("Completed() = %v, want %v", got, tc.want)
			}
		})
	}
}
