package revision

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestTemplatePatchReplacesTheWholeTemplate(t *testing.T) {
	tmpl := corev1.PodTemplateSpec{}
	tmpl.Labels = map[string]string{"app": "web"}
	tmpl.Spec.Containers = []corev1.Container{{Name: "c", Image: "nginx:1"}}
	raw, err := TemplatePatch(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Spec struct {
			Template map[string]any `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"$patch":   "replace",
		"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx:1", "resources": map[string]any{}}}},
	}
	if d := cmp.Diff(want, got.Spec.Template); d != "" {
		t.Errorf("patch (-want +got):\n%s", d)
	}
}
