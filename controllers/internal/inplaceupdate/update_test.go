package inplaceupdate

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/daemon/envhash"
)

func TestCompletedEnvFromMetadata(t *testing.T) {
	app := corev1.Container{Name: "app", Image: "web:1", Env: []corev1.EnvVar{{Name: "TRACK",
		ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['track']"}}}}}
	side := corev1.Container{Name: "side", Image: "side:1"}
	hashWith := func(c corev1.Container, track string) uint64 {
		p := &corev1.Pod{}
		p.Labels = map[string]string{"track": track}
		return envhash.Expected(&c, p)
	}
	type meta struct {
		id   string
		hash uint64
	}
	// pod has label track=canary, status container IDs app-2 and side-1, and the given
	// runtime-containers-meta (nil: no annotation).
	pod := func(metas map[string]meta) *corev1.Pod {
		p := &corev1.Pod{}
		p.Labels = map[string]string{"track": "canary"}
		p.Spec.Containers = []corev1.Container{app, side}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{
			{Name: "app", Image: "web:1", ImageID: "sha256:web", ContainerID: "containerd://app-2"},
			{Name: "side", Image: "side:1", ImageID: "sha256:side", ContainerID: "containerd://side-1"},
		}
		if metas != nil {
			set := appspub.RuntimeContainerMetaSet{}
			for _, name := range []string{"app", "side"} {
				if m, ok := metas[name]; ok {
					set.Containers = append(set.Containers, appspub.RuntimeContainerMeta{Name: name, ContainerID: m.id,
						Hashes: appspub.RuntimeContainerHashes{ExtractedEnvFromMetadataHash: m.hash}})
				}
			}
			raw, _ := json.Marshal(set)
			p.Annotations = map[string]string{appspub.RuntimeContainerMetaKey: string(raw)}
		}
		return p
	}
	envState := &appspub.InPlaceUpdateState{Revision: "r2", UpdateEnvFromMetadata: true, LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{}}
	sideOK := meta{"containerd://side-1", hashWith(side, "")}
	tests := map[string]struct {
		pod   *corev1.Pod
		state *appspub.InPlaceUpdateState
		want  bool
	}{
		"an env-from-metadata update is not finished before the daemon reports anything": {
			pod: pod(nil), state: envState,
		},
		"it is not finished while the running container still has the old env's hash": {
			pod:   pod(map[string]meta{"app": {"containerd://app-2", hashWith(app, "stable")}, "side": sideOK}),
			state: envState,
		},
		"it is not finished while the annotation still describes the container before the restart": {
			pod:   pod(map[string]meta{"app": {"containerd://app-1", hashWith(app, "canary")}, "side": sideOK}),
			state: envState,
		},
		"it is not finished while the new container's hash is not recorded yet": {
			pod:   pod(map[string]meta{"app": {"containerd://app-2", 0}, "side": sideOK}),
			state: envState,
		},
		"it is not finished while a container is missing from the annotation": {
			pod:   pod(map[string]meta{"app": {"containerd://app-2", hashWith(app, "canary")}}),
			state: envState,
		},
		"it is finished once every current container ID has the hash the pod's metadata gives": {
			pod:   pod(map[string]meta{"app": {"containerd://app-2", hashWith(app, "canary")}, "side": sideOK}),
			state: envState,
			want:  true,
		},
		"an update that does not change env from metadata does not wait for the daemon": {
			pod:   pod(nil),
			state: &appspub.InPlaceUpdateState{Revision: "r2", LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{}},
			want:  true,
		},
		"an update of env and image waits for the new image ID too": {
			pod: pod(map[string]meta{"app": {"containerd://app-2", hashWith(app, "canary")}, "side": sideOK}),
			state: &appspub.InPlaceUpdateState{Revision: "r2", UpdateEnvFromMetadata: true,
				LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"app": {ImageID: "sha256:web"}}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Completed(tc.pod, tc.state); got != tc.want {
				t.Fatalf("Completed() = %v, want %v", got, tc.want)
			}
		})
	}
}
