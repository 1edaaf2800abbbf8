package inplaceupdate

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/apis/apps/pub/envhash"
	"github.com/kruise-addon/kruise-addon/controllers/internal/testclient"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
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
		"an update of env and image waits for the new image too": {
			pod: func() *corev1.Pod {
				p := pod(map[string]meta{"app": {"containerd://app-2", hashWith(app, "canary")}, "side": sideOK})
				p.Spec.Containers[0].Image = "web:2"
				return p
			}(),
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

// TestUpdateSpecWriteDoesNotConflictWithTheKubelet: Update takes the pod out of service with a
// condition patch, and the kubelet answers at once with a status write of its own. The spec
// write that follows must go through without a conflict and keep what the kubelet wrote: with
// a resourceVersion on it, it conflicted for about every pod and waited in a back-off.
func TestUpdateSpecWriteDoesNotConflictWithTheKubelet(t *testing.T) {
	pod := builder.Pod("p", "ns").Container("main", "web:1").ReadinessGate(appspub.InPlaceUpdateReady).
		Condition(appspub.InPlaceUpdateReady, corev1.ConditionTrue).Obj()
	base := testclient.New(pod)
	cachedPod := &corev1.Pod{}
	if err := base.Get(context.Background(), client.ObjectKeyFromObject(pod), cachedPod); err != nil {
		t.Fatal(err)
	}
	specWrites := 0
	c := interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := c.SubResource(sub).Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			// The kubelet sees the readiness gate go False and writes the pod's Ready condition.
			live := &corev1.Pod{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
				return err
			}
			live.Status.Conditions = append(live.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse})
			return c.Status().Update(ctx, live)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			specWrites++
			return c.Patch(ctx, obj, patch, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			specWrites++
			return c.Update(ctx, obj, opts...)
		},
	})
	u := &Updater{Client: c, Reader: base, Clock: clocktesting.NewFakePassiveClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
		RevisionLabel: "controller-revision-hash"}
	if _, err := u.Update(context.Background(), cachedPod, &Plan{Revision: "v2", ContainerImages: map[string]string{"main": "web:2"}}); err != nil {
		t.Fatal(err)
	}
	if specWrites != 1 {
		t.Errorf("spec writes = %d, want 1", specWrites)
	}
	stored := &corev1.Pod{}
	if err := base.Get(context.Background(), client.ObjectKeyFromObject(pod), stored); err != nil {
		t.Fatal(err)
	}
	if got := stored.Spec.Containers[0].Image; got != "web:2" {
		t.Errorf("image = %q, want web:2", got)
	}
	if got := stored.Labels["controller-revision-hash"]; got != "v2" {
		t.Errorf("revision label = %q, want v2", got)
	}
	if c := Condition(stored); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("InPlaceUpdateReady = %+v, want False", c)
	}
	ready := false
	for _, c := range stored.Status.Conditions {
		ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse)
	}
	if !ready {
		t.Errorf("the kubelet's Ready=False was lost: %+v", stored.Status.Conditions)
	}
}

func TestRefreshLeavesANewPodsFirstConditionToThePodReadinessController(t *testing.T) {
	completed, err := json.Marshal(appspub.InPlaceUpdateState{Revision: "v2", LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"main": {ImageID: "sha256:old"}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		pod        *corev1.Pod
		wantWrites int
		want       corev1.ConditionStatus
	}{
		"a new pod with the gate and no condition gets no write from its workload": {
			pod: builder.Pod("p", "ns").Container("main", "web:1").ReadinessGate(appspub.InPlaceUpdateReady).Obj(),
		},
		"a pod whose update completed gets its condition back True": {
			pod: func() *corev1.Pod {
				p := builder.Pod("p", "ns").Container("main", "web:2").ReadinessGate(appspub.InPlaceUpdateReady).
					Annotation(appspub.InPlaceUpdateStateKey, string(completed)).
					Condition(appspub.InPlaceUpdateReady, corev1.ConditionFalse).Obj()
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "web:2", ImageID: "sha256:new"}}
				return p
			}(),
			wantWrites: 1,
			want:       corev1.ConditionTrue,
		},
		"a pod never updated whose condition is False gets it True": {
			pod: builder.Pod("p", "ns").Container("main", "web:1").ReadinessGate(appspub.InPlaceUpdateReady).
				Condition(appspub.InPlaceUpdateReady, corev1.ConditionFalse).Obj(),
			wantWrites: 1,
			want:       corev1.ConditionTrue,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			base := testclient.New(tt.pod)
			writes := 0
			c := interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
				SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
					writes++
					return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
				},
			})
			u := &Updater{Client: c, Reader: base, Clock: clocktesting.NewFakePassiveClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}
			res, err := u.Refresh(context.Background(), tt.pod)
			if err != nil {
				t.Fatal(err)
			}
			if res.Updating {
				t.Errorf("Refresh says the pod is updating")
			}
			if writes != tt.wantWrites {
				t.Errorf("%d status writes, want %d", writes, tt.wantWrites)
			}
			stored := &corev1.Pod{}
			if err := base.Get(context.Background(), client.ObjectKeyFromObject(tt.pod), stored); err != nil {
				t.Fatal(err)
			}
			var got corev1.ConditionStatus
			if c := Condition(stored); c != nil {
				got = c.Status
			}
			if got != tt.want {
				t.Errorf("InPlaceUpdateReady = %q, want %q", got, tt.want)
			}
		})
	}
}

// The kubelet's hashes in runtime-containers-meta settle completion, as in 1.8: a runtime reports
// an image by the first of its tags, so an update to another tag of the same image shows the old
// tag and image ID, and only the hash of the running container tells it was started from the new
// spec.
func TestCompletedByTheKubeletsHashes(t *testing.T) {
	spec := corev1.Container{Name: "main", Image: "sample:v1-mainline"}
	old := corev1.Container{Name: "main", Image: "sample:v1"}
	// The runtime reports the old tag and the same image ID for the new container.
	pod := func(metaID string, hashed corev1.Container) *corev1.Pod {
		p := &corev1.Pod{}
		p.Spec.Containers = []corev1.Container{spec}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", Image: "sample:v1", ImageID: "sha256:one", ContainerID: "containerd://new"}}
		raw, _ := json.Marshal(appspub.RuntimeContainerMetaSet{Containers: []appspub.RuntimeContainerMeta{{Name: "main", ContainerID: metaID,
			Hashes: appspub.RuntimeContainerHashes{PlainHash: kubeletHash(&hashed)}}}})
		p.Annotations = map[string]string{appspub.RuntimeContainerMetaKey: string(raw)}
		return p
	}
	state := &appspub.InPlaceUpdateState{Revision: "r2", LastContainerStatuses: map[string]appspub.InPlaceUpdateContainerStatus{"main": {ImageID: "sha256:one"}}}
	tests := map[string]struct {
		pod  *corev1.Pod
		want bool
	}{
		"the running container's hash is the new spec's: completed":      {pod: pod("containerd://new", spec), want: true},
		"the running container's hash is the old spec's: not yet":        {pod: pod("containerd://new", old)},
		"the hash is of another container than the one running: not yet": {pod: pod("containerd://old", spec)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Completed(tc.pod, state.DeepCopy()); got != tc.want {
				t.Errorf("Completed = %v, want %v", got, tc.want)
			}
		})
	}
}
