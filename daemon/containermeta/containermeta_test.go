package containermeta

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/apis/apps/pub/envhash"
	"github.com/kruise-addon/kruise-addon/daemon/cri"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

func TestBuild(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}, {Name: "sidecar"}}}}
	type tcase struct {
		running   map[string]*cri.Container
		envHashes map[string]uint64
		want      appspub.RuntimeContainerMetaSet
	}
	tests := map[string]tcase{
		"containers are listed in pod spec order with ID, restart count and hash": {
			running: map[string]*cri.Container{
				"sidecar": {FullID: "containerd://b", RestartCount: 2, Hash: 7},
				"app":     {FullID: "containerd://a", RestartCount: 0, Hash: 9},
			},
			want: appspub.RuntimeContainerMetaSet{Containers: []appspub.RuntimeContainerMeta{
				{Name: "app", ContainerID: "containerd://a", Hashes: appspub.RuntimeContainerHashes{PlainHash: 9, PlainHashWithoutResources: 9}},
				{Name: "sidecar", ContainerID: "containerd://b", RestartCount: 2, Hashes: appspub.RuntimeContainerHashes{PlainHash: 7, PlainHashWithoutResources: 7}},
			}},
		},
		"a spec container the runtime does not run is left out": {
			running: map[string]*cri.Container{"app": {FullID: "containerd://a"}},
			want: appspub.RuntimeContainerMetaSet{Containers: []appspub.RuntimeContainerMeta{
				{Name: "app", ContainerID: "containerd://a"},
			}},
		},
		"env-from-metadata hashes are recorded per container; one not known is 0": {
			running:   map[string]*cri.Container{"app": {FullID: "containerd://a"}, "sidecar": {FullID: "containerd://b"}},
			envHashes: map[string]uint64{"app": 11},
			want: appspub.RuntimeContainerMetaSet{Containers: []appspub.RuntimeContainerMeta{
				{Name: "app", ContainerID: "containerd://a", Hashes: appspub.RuntimeContainerHashes{ExtractedEnvFromMetadataHash: 11}},
				{Name: "sidecar", ContainerID: "containerd://b"},
			}},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		testkit.Diff(t, "Build", tt.want, Build(pod, tt.running, tt.envHashes))
	})
}

func TestRecorded(t *testing.T) {
	set := &appspub.RuntimeContainerMetaSet{Containers: []appspub.RuntimeContainerMeta{
		{Name: "app", ContainerID: "containerd://a", Hashes: appspub.RuntimeContainerHashes{ExtractedEnvFromMetadataHash: 5}},
	}}
	tests := []struct {
		name, container, id string
		set                 *appspub.RuntimeContainerMetaSet
		want                uint64
	}{
		{name: "the hash of the same container ID is carried over", set: set, container: "app", id: "containerd://a", want: 5},
		{name: "a new container ID is hashed afresh", set: set, container: "app", id: "containerd://a2"},
		{name: "a pod without the annotation has nothing recorded", container: "app", id: "containerd://a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Recorded(tt.set, tt.container, tt.id); got != tt.want {
				t.Errorf("Recorded = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestToRestart(t *testing.T) {
	envVar := func(name, label string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['" + label + "']"}}}
	}
	app := corev1.Container{Name: "app", Env: []corev1.EnvVar{envVar("TRACK", "track")}}
	side := corev1.Container{Name: "side"}
	// pod is a pod whose label track is now "canary", mid-update unless changed by the row.
	pod := func(edit func(*corev1.Pod)) *corev1.Pod {
		state, _ := json.Marshal(appspub.InPlaceUpdateState{Revision: "r2", UpdateEnvFromMetadata: true})
		p := &corev1.Pod{Spec: corev1.PodSpec{
			Containers:     []corev1.Container{app, side},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}},
		}}
		p.Labels = map[string]string{"track": "canary"}
		p.Annotations = map[string]string{appspub.InPlaceUpdateStateKey: string(state)}
		p.Status.Conditions = []corev1.PodCondition{{Type: appspub.InPlaceUpdateReady, Status: corev1.ConditionFalse}}
		if edit != nil {
			edit(p)
		}
		return p
	}
	hashWith := func(c corev1.Container, track string) uint64 {
		p := &corev1.Pod{}
		p.Labels = map[string]string{"track": track}
		return envhash.Expected(&c, p)
	}
	running := map[string]*cri.Container{
		"app":  {Name: "app", FullID: "containerd://a", State: criv1.ContainerState_CONTAINER_RUNNING},
		"side": {Name: "side", FullID: "containerd://s", State: criv1.ContainerState_CONTAINER_RUNNING},
	}
	set := func(appHash uint64) appspub.RuntimeContainerMetaSet {
		return appspub.RuntimeContainerMetaSet{Containers: []appspub.RuntimeContainerMeta{
			{Name: "app", ContainerID: "containerd://a", Hashes: appspub.RuntimeContainerHashes{ExtractedEnvFromMetadataHash: appHash}},
			{Name: "side", ContainerID: "containerd://s", Hashes: appspub.RuntimeContainerHashes{ExtractedEnvFromMetadataHash: hashWith(side, "")}},
		}}
	}
	stale, fresh := hashWith(app, "stable"), hashWith(app, "canary")
	type tcase struct {
		pod     *corev1.Pod
		set     appspub.RuntimeContainerMetaSet
		running map[string]*cri.Container
		want    []string
	}
	tests := map[string]tcase{
		"during an env-from-metadata update, a container started with the old label value restarts; one that reads no label does not": {
			pod: pod(nil), set: set(stale), running: running, want: []string{"app"},
		},
		"a container already started with the new value is left alone": {
			pod: pod(nil), set: set(fresh), running: running,
		},
		"a container whose hash is not recorded yet waits": {
			pod: pod(nil), set: set(0), running: running,
		},
		"a stopped container is not stopped again while the kubelet starts the next one": {
			pod: pod(nil), set: set(stale),
			running: map[string]*cri.Container{"app": {Name: "app", FullID: "containerd://a", State: criv1.ContainerState_CONTAINER_EXITED}},
		},
		"an update that does not change env from metadata restarts nothing": {
			pod: pod(func(p *corev1.Pod) {
				s, _ := json.Marshal(appspub.InPlaceUpdateState{Revision: "r2"})
				p.Annotations[appspub.InPlaceUpdateStateKey] = string(s)
			}),
			set: set(stale), running: running,
		},
		"a pod with no in-place update state restarts nothing when its labels change": {
			pod: pod(func(p *corev1.Pod) { delete(p.Annotations, appspub.InPlaceUpdateStateKey) }),
			set: set(stale), running: running,
		},
		"once the update is complete (InPlaceUpdateReady True) a later label change restarts nothing": {
			pod: pod(func(p *corev1.Pod) {
				p.Status.Conditions[0].Status = corev1.ConditionTrue
			}),
			set: set(stale), running: running,
		},
		"a pod with the readiness gate but no condition yet is not mid-update": {
			pod: pod(func(p *corev1.Pod) { p.Status.Conditions = nil }),
			set: set(stale), running: running,
		},
		"a pod without the readiness gate follows its state alone": {
			pod: pod(func(p *corev1.Pod) {
				p.Spec.ReadinessGates, p.Status.Conditions = nil, nil
			}),
			set: set(stale), running: running, want: []string{"app"},
		},
		"the old unprefixed state key is read too": {
			pod: pod(func(p *corev1.Pod) {
				p.Annotations[appspub.InPlaceUpdateStateKeyOld] = p.Annotations[appspub.InPlaceUpdateStateKey]
				delete(p.Annotations, appspub.InPlaceUpdateStateKey)
			}),
			set: set(stale), running: running, want: []string{"app"},
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tt tcase) {
		testkit.Diff(t, "ToRestart", tt.want, ToRestart(tt.pod, tt.set, tt.running))
	})
}
