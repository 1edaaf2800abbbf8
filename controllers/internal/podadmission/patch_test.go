package podadmission

import (
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// TestPatchTurnsTheRequestIntoTheChangedPod applies Patch to the JSON of the pod before and
// compares the outcome with the JSON of the pod after.
func TestPatchTurnsTheRequestIntoTheChangedPod(t *testing.T) {
	base := func() *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"app": "web", "a/b": "1"},
				Annotations: map[string]string{"x~y": "1"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "img"}}, Priority: ptr.To[int32](0)},
		}
	}
	type tcase struct {
		before  func() *corev1.Pod
		change  func(p *corev1.Pod)
		wantOps int
	}
	testkit.Cases(t, map[string]tcase{
		"an unchanged pod needs no operation": {before: base, change: func(*corev1.Pod) {}},
		"a label added, one changed and one removed are an operation each": {before: base, change: func(p *corev1.Pod) {
			p.Labels = map[string]string{"app": "db", "new/key": "v"}
		}, wantOps: 3},
		"annotations emptied are removed whole": {before: base, change: func(p *corev1.Pod) { p.Annotations = nil }, wantOps: 1},
		"annotations on a pod without any are set whole": {before: func() *corev1.Pod {
			p := base()
			p.Annotations = nil
			return p
		}, change: func(p *corev1.Pod) { p.Annotations = map[string]string{"k": "v"} }, wantOps: 1},
		"a changed spec field is set whole": {before: base, change: func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Image: "s"})
		}, wantOps: 1},
		"a spec field left out when empty is removed": {before: base, change: func(p *corev1.Pod) { p.Spec.Priority = nil }, wantOps: 1},
		"metadata empty before is set whole": {before: func() *corev1.Pod {
			return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}}
		}, change: func(p *corev1.Pod) { p.Namespace = "ns" }, wantOps: 1},
		"a changed status is set whole": {before: base, change: func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending }, wantOps: 1},
	}, func(t *testing.T, tt tcase) {
		before := tt.before()
		after := before.DeepCopy()
		tt.change(after)
		ops := Patch(before, after)
		testkit.Diff(t, "operations", tt.wantOps, len(ops))
		raw, err := json.Marshal(before)
		if err != nil {
			t.Fatal(err)
		}
		opsRaw, err := json.Marshal(ops)
		if err != nil {
			t.Fatal(err)
		}
		p, err := jsonpatch.DecodePatch(opsRaw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Apply(raw)
		if err != nil {
			t.Fatalf("apply %s: %v", opsRaw, err)
		}
		want, err := json.Marshal(after)
		if err != nil {
			t.Fatal(err)
		}
		var gotDoc, wantDoc any
		_ = json.Unmarshal(got, &gotDoc)
		_ = json.Unmarshal(want, &wantDoc)
		testkit.Diff(t, "patched pod", wantDoc, gotDoc)
	})
}
