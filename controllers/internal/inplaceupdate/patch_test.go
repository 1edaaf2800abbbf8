package inplaceupdate

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// TestInPlacePatchIsWhatThePlanSays checks the bytes of the in-place spec patch: written straight
// from the plan, they hold the pod's UID, the labels and annotations the plan changes, the
// revision label, the in-place state and the new images, and nothing else of the pod.
func TestInPlacePatchIsWhatThePlanSays(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	u := &Updater{RevisionLabel: "controller-revision-hash", RevisionValue: func(name string) string { return "h-" + name }}
	pod := func() *corev1.Pod {
		p := builder.Pod("web-0", "ns").Container("main", "web:1").Container("side", "side:1").Obj()
		p.UID = "uid-1"
		p.Labels = map[string]string{"app": "web", "track": "stable", "old": "x"}
		p.Annotations = map[string]string{"keep": "me"}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", ImageID: "sha256:main1"}, {Name: "side", ImageID: "sha256:side1"}}
		return p
	}
	state := func(last map[string]string, containers ...string) string {
		s := appspub.InPlaceUpdateState{Revision: "r2", UpdateTimestamp: now, UpdateImages: true,
			LastContainerStatuses:  map[string]appspub.InPlaceUpdateContainerStatus{},
			ContainerBatchesRecord: []appspub.InPlaceUpdateContainerBatch{{Timestamp: now, Containers: containers}}}
		for name, id := range last {
			s.LastContainerStatuses[name] = appspub.InPlaceUpdateContainerStatus{ImageID: id}
		}
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	cases := map[string]struct {
		pod       *corev1.Pod
		plan      *Plan
		wantPatch map[string]any
	}{
		"an image update patches the image, the revision label and the state, and names the UID": {
			pod:  pod(),
			plan: &Plan{Revision: "r2", ContainerImages: map[string]string{"main": "web:2"}},
			wantPatch: map[string]any{
				"metadata": map[string]any{"uid": "uid-1",
					"labels":      map[string]any{"controller-revision-hash": "h-r2"},
					"annotations": map[string]any{appspub.InPlaceUpdateStateKey: state(map[string]string{"main": "sha256:main1"}, "main")}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "image": "web:2"}}},
			},
		},
		"labels and annotations the plan sets are set, those it removes are patched to null": {
			pod: pod(),
			plan: &Plan{Revision: "r2", ContainerImages: map[string]string{"side": "side:2"},
				Labels: map[string]*string{"track": ptr.To("canary"), "old": nil}, Annotations: map[string]*string{"note": ptr.To("v2")}},
			wantPatch: map[string]any{
				"metadata": map[string]any{"uid": "uid-1",
					"labels":      map[string]any{"controller-revision-hash": "h-r2", "track": "canary", "old": nil},
					"annotations": map[string]any{"note": "v2", appspub.InPlaceUpdateStateKey: state(map[string]string{"side": "sha256:side1"}, "side")}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "side", "image": "side:2"}}},
			},
		},
		"two new images are patched in the pod's container order": {
			pod:  pod(),
			plan: &Plan{Revision: "r2", ContainerImages: map[string]string{"side": "side:2", "main": "web:2"}},
			wantPatch: map[string]any{
				"metadata": map[string]any{"uid": "uid-1",
					"labels":      map[string]any{"controller-revision-hash": "h-r2"},
					"annotations": map[string]any{appspub.InPlaceUpdateStateKey: state(map[string]string{"main": "sha256:main1", "side": "sha256:side1"}, "main", "side")}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "image": "web:2"}, map[string]any{"name": "side", "image": "side:2"}}},
			},
		},
		"under a grace period the images wait in the grace annotation and the spec is not patched": {
			pod:  pod(),
			plan: &Plan{Revision: "r2", ContainerImages: map[string]string{"main": "web:2"}, GraceSeconds: 10},
			wantPatch: map[string]any{
				"metadata": map[string]any{"uid": "uid-1",
					"labels": map[string]any{"controller-revision-hash": "h-r2"},
					"annotations": map[string]any{appspub.InPlaceUpdateStateKey: state(map[string]string{"main": "sha256:main1"}, "main"),
						appspub.InPlaceUpdateGraceKey: `{"revision":"r2","containerImages":{"main":"web:2"},"graceSeconds":10}`}},
			},
		},
		"a grace annotation left from an earlier update is removed": {
			pod: func() *corev1.Pod {
				p := pod()
				p.Annotations[appspub.InPlaceUpdateGraceKey] = `{"revision":"r1"}`
				return p
			}(),
			plan: &Plan{Revision: "r2", ContainerImages: map[string]string{"main": "web:2"}},
			wantPatch: map[string]any{
				"metadata": map[string]any{"uid": "uid-1",
					"labels":      map[string]any{"controller-revision-hash": "h-r2"},
					"annotations": map[string]any{appspub.InPlaceUpdateStateKey: state(map[string]string{"main": "sha256:main1"}, "main"), appspub.InPlaceUpdateGraceKey: nil}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "image": "web:2"}}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, _, err := u.planChange(tc.pod, tc.plan, now)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.patch(tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			// Compared as JSON values: the order of an object's keys means nothing to the apiserver.
			var gotPatch any
			if err := json.Unmarshal(got, &gotPatch); err != nil {
				t.Fatalf("patch %s: %v", got, err)
			}
			if diff := cmp.Diff(jsonValue(t, tc.wantPatch), gotPatch); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
		})
	}
}

// jsonValue is v as json.Unmarshal gives it back.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
