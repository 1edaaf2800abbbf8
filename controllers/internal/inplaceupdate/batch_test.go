package inplaceupdate

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// prioritized is a container whose pod webhook gave it launch priority p (the barrier env).
func prioritized(name string, p string) corev1.Container {
	return corev1.Container{Name: name, Env: []corev1.EnvVar{{Name: appspub.ContainerLaunchBarrierEnvName, ValueFrom: &corev1.EnvVarSource{
		ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "web-barrier"}, Key: "p_" + p}}}}}
}

func labels(kv ...string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Labels: map[string]string{}}
	for i := 0; i < len(kv); i += 2 {
		m.Labels[kv[i]] = kv[i+1]
	}
	return m
}

func TestPlanBatch(t *testing.T) {
	tests := map[string]struct {
		containers []corev1.Container
		images     map[string]string
		refMeta    map[string]metav1.ObjectMeta
		want       batch
	}{
		"without launch priority every changed container goes in one batch": {
			containers: []corev1.Container{{Name: "app"}, {Name: "sidecar"}},
			images:     map[string]string{"app": "app:2", "sidecar": "sidecar:2"},
			want:       batch{Containers: []string{"app", "sidecar"}, Images: map[string]string{"app": "app:2", "sidecar": "sidecar:2"}},
		},
		"the higher-priority sidecar goes first and the app waits": {
			containers: []corev1.Container{prioritized("app", "0"), prioritized("sidecar", "10")},
			images:     map[string]string{"app": "app:2", "sidecar": "sidecar:2"},
			want: batch{Containers: []string{"sidecar"}, Images: map[string]string{"sidecar": "sidecar:2"},
				NextImages: map[string]string{"app": "app:2"}},
		},
		"containers of one priority go together": {
			containers: []corev1.Container{prioritized("a", "5"), prioritized("b", "5"), prioritized("c", "-1")},
			images:     map[string]string{"a": "a:2", "b": "b:2", "c": "c:2"},
			want: batch{Containers: []string{"a", "b"}, Images: map[string]string{"a": "a:2", "b": "b:2"},
				NextImages: map[string]string{"c": "c:2"}},
		},
		"only changed containers rank: an unchanged high-priority container does not hold the others": {
			containers: []corev1.Container{prioritized("app", "0"), prioritized("sidecar", "10")},
			images:     map[string]string{"app": "app:2"},
			want:       batch{Containers: []string{"app"}, Images: map[string]string{"app": "app:2"}},
		},
		"a changed container without a priority goes in the first batch": {
			containers: []corev1.Container{{Name: "plain"}, prioritized("app", "0"), prioritized("sidecar", "10")},
			images:     map[string]string{"plain": "plain:2", "app": "app:2", "sidecar": "sidecar:2"},
			want: batch{Containers: []string{"plain", "sidecar"}, Images: map[string]string{"plain": "plain:2", "sidecar": "sidecar:2"},
				NextImages: map[string]string{"app": "app:2"}},
		},
		"a label read only by a lower-priority container waits with it": {
			containers: []corev1.Container{prioritized("app", "0"), prioritized("sidecar", "10")},
			images:     map[string]string{"sidecar": "sidecar:2"},
			refMeta:    map[string]metav1.ObjectMeta{"app": labels("track", "canary")},
			want: batch{Containers: []string{"sidecar"}, Images: map[string]string{"sidecar": "sidecar:2"},
				NextRefMetadata: map[string]metav1.ObjectMeta{"app": labels("track", "canary")}},
		},
		"a label the first batch reads brings every other container that reads it into the batch": {
			containers: []corev1.Container{prioritized("app", "0"), prioritized("sidecar", "10"), prioritized("logger", "-5")},
			refMeta: map[string]metav1.ObjectMeta{
				"sidecar": labels("track", "canary"), "app": labels("track", "canary", "tier", "gold"), "logger": labels("tier", "gold"),
			},
			want: batch{Containers: []string{"app", "logger", "sidecar"}, RefMetadata: map[string]metav1.ObjectMeta{
				"sidecar": labels("track", "canary"), "app": labels("track", "canary", "tier", "gold"), "logger": labels("tier", "gold"),
			}},
		},
		"nothing changed is an empty batch": {
			containers: []corev1.Container{prioritized("app", "0")},
			want:       batch{Containers: []string{}},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := planBatch(tt.containers, tt.images, tt.refMeta)
			testkit.Diff(t, "batch", tt.want, got)
		})
	}
}

func TestBatchRecord(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	pod := &corev1.Pod{}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", ImageID: "sha256:app1"}, {Name: "sidecar", ImageID: "sha256:side1"}}
	tests := map[string]struct {
		b     batch
		state appspub.InPlaceUpdateState
		want  appspub.InPlaceUpdateState
	}{
		"a first batch with containers waiting records their images, the readiness check and the batch": {
			b: batch{Containers: []string{"sidecar"}, Images: map[string]string{"sidecar": "sidecar:2"}, NextImages: map[string]string{"app": "app:2"}},
			want: appspub.InPlaceUpdateState{
				LastContainerStatuses:  map[string]appspub.InPlaceUpdateContainerStatus{"sidecar": {ImageID: "sha256:side1"}},
				NextContainerImages:    map[string]string{"app": "app:2"},
				PreCheckBeforeNext:     &appspub.InPlaceUpdatePreCheckBeforeNext{ContainersRequiredReady: []string{"sidecar"}},
				ContainerBatchesRecord: []appspub.InPlaceUpdateContainerBatch{{Timestamp: at, Containers: []string{"sidecar"}}},
			},
		},
		"the last batch adds its image IDs, keeps the earlier ones, and clears what waited and the check": {
			b: batch{Containers: []string{"app"}, Images: map[string]string{"app": "app:2"}},
			state: appspub.InPlaceUpdateState{
				LastContainerStatuses:  map[string]appspub.InPlaceUpdateContainerStatus{"sidecar": {ImageID: "sha256:side1"}},
				NextContainerImages:    map[string]string{"app": "app:2"},
				PreCheckBeforeNext:     &appspub.InPlaceUpdatePreCheckBeforeNext{ContainersRequiredReady: []string{"sidecar"}},
				ContainerBatchesRecord: []appspub.InPlaceUpdateContainerBatch{{Timestamp: at, Containers: []string{"sidecar"}}},
			},
			want: appspub.InPlaceUpdateState{
				LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"sidecar": {ImageID: "sha256:side1"}, "app": {ImageID: "sha256:app1"}},
				ContainerBatchesRecord: []appspub.InPlaceUpdateContainerBatch{
					{Timestamp: at, Containers: []string{"sidecar"}}, {Timestamp: at, Containers: []string{"app"}},
				},
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			tt.b.record(pod, &tt.state, at)
			testkit.Diff(t, "state", tt.want, tt.state)
		})
	}
}

// The state annotation uses 1.8's field names and leaves out the empty optional ones.
func TestStateAnnotationIsWireCompatible(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	tests := map[string]struct {
		state appspub.InPlaceUpdateState
		want  string
	}{
		"an image update in one batch": {
			state: appspub.InPlaceUpdateState{Revision: "r2", UpdateTimestamp: at, UpdateImages: true,
				LastContainerStatuses:  map[string]appspub.InPlaceUpdateContainerStatus{"app": {ImageID: "sha256:a"}},
				ContainerBatchesRecord: []appspub.InPlaceUpdateContainerBatch{{Timestamp: at, Containers: []string{"app"}}}},
			want: `{"revision":"r2","updateTimestamp":"2026-01-02T03:04:05Z","lastContainerStatuses":{"app":{"imageID":"sha256:a"}},` +
				`"updateImages":true,"containerBatchesRecord":[{"timestamp":"2026-01-02T03:04:05Z","containers":["app"]}]}`,
		},
		"a first batch with the app waiting behind its sidecar": {
			state: appspub.InPlaceUpdateState{Revision: "r2", UpdateTimestamp: at, UpdateImages: true, UpdateEnvFromMetadata: true,
				LastContainerStatuses:    map[string]appspub.InPlaceUpdateContainerStatus{"sidecar": {ImageID: "sha256:s"}},
				NextContainerImages:      map[string]string{"app": "app:2"},
				NextContainerRefMetadata: map[string]metav1.ObjectMeta{"app": labels("track", "canary")},
				PreCheckBeforeNext:       &appspub.InPlaceUpdatePreCheckBeforeNext{ContainersRequiredReady: []string{"sidecar"}},
				ContainerBatchesRecord:   []appspub.InPlaceUpdateContainerBatch{{Timestamp: at, Containers: []string{"sidecar"}}}},
			want: `{"revision":"r2","updateTimestamp":"2026-01-02T03:04:05Z","lastContainerStatuses":{"sidecar":{"imageID":"sha256:s"}},` +
				`"updateEnvFromMetadata":true,"updateImages":true,"nextContainerImages":{"app":"app:2"},` +
				`"nextContainerRefMetadata":{"app":{"labels":{"track":"canary"}}},` +
				`"preCheckBeforeNext":{"containersRequiredReady":["sidecar"]},` +
				`"containerBatchesRecord":[{"timestamp":"2026-01-02T03:04:05Z","containers":["sidecar"]}]}`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			raw, err := json.Marshal(tt.state)
			if err != nil {
				t.Fatal(err)
			}
			testkit.Diff(t, "annotation", tt.want, string(raw))
		})
	}
}
