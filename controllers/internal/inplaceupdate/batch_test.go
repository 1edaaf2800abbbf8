package inplaceupdate

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appspub "github.com/kruise-addon/kruise-addon/apis/apps/pub"
	"github.com/kruise-addon/kruise-addon/apis/apps/pub/envhash"
	"github.com/kruise-addon/kruise-addon/controllers/internal/testclient"
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
		resources  map[string]corev1.ResourceRequirements
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
		"a resize of the lower-priority app waits for the sidecar's batch, as 1.8's nextContainerResources": {
			containers: []corev1.Container{prioritized("app", "0"), prioritized("sidecar", "10")},
			images:     map[string]string{"sidecar": "sidecar:2"},
			resources:  map[string]corev1.ResourceRequirements{"app": {Requests: list("200m", "")}},
			want: batch{Containers: []string{"sidecar"}, Images: map[string]string{"sidecar": "sidecar:2"},
				NextResources: map[string]corev1.ResourceRequirements{"app": {Requests: list("200m", "")}}},
		},
		"a resized container ranks like a changed image: the resized sidecar goes first": {
			containers: []corev1.Container{prioritized("app", "0"), prioritized("sidecar", "10")},
			images:     map[string]string{"app": "app:2"},
			resources:  map[string]corev1.ResourceRequirements{"sidecar": {Limits: list("", "256Mi")}},
			want: batch{Containers: []string{"sidecar"}, Resources: map[string]corev1.ResourceRequirements{"sidecar": {Limits: list("", "256Mi")}},
				NextImages: map[string]string{"app": "app:2"}},
		},
		"nothing changed is an empty batch": {
			containers: []corev1.Container{prioritized("app", "0")},
			want:       batch{Containers: []string{}},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := planBatch(tt.containers, tt.images, tt.refMeta, tt.resources)
			testkit.Diff(t, "batch", tt.want, got, quantities)
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

// prioritizedPod has an app container "main" of launch priority 0 and a "sidecar" of 10, both
// running their first images.
func prioritizedPod() *corev1.Pod {
	p := &corev1.Pod{}
	p.Name, p.Namespace, p.UID = "p", "ns", "uid-1"
	app, side := prioritized("main", "0"), prioritized("sidecar", "10")
	app.Image, side.Image = "web:1", "side:1"
	p.Spec.Containers = []corev1.Container{app, side}
	p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: appspub.InPlaceUpdateReady}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{
		{Name: "main", Image: "web:1", ImageID: "sha256:web1", Ready: true},
		{Name: "sidecar", Image: "side:1", ImageID: "sha256:side1", Ready: true},
	}
	return p
}

// TestNextBatchWaitsForTheLastBatchsContainers follows an update of both containers of a pod
// with launch priority: Update writes only the sidecar's image, and Refresh writes the app's
// only once the sidecar reports its new image and is ready.
func TestNextBatchWaitsForTheLastBatchsContainers(t *testing.T) {
	ctx := context.Background()
	pod := prioritizedPod()
	c := testclient.New(pod)
	u := &Updater{Client: c, Clock: clocktesting.NewFakePassiveClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), RevisionLabel: "controller-revision-hash"}
	if _, err := u.Update(ctx, pod, &Plan{Revision: "v2", ContainerImages: map[string]string{"main": "web:2", "sidecar": "side:2"}}); err != nil {
		t.Fatal(err)
	}
	get := func() *corev1.Pod {
		t.Helper()
		p := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	images := func(p *corev1.Pod) [2]string {
		return [2]string{p.Spec.Containers[0].Image, p.Spec.Containers[1].Image}
	}
	if got := images(get()); got != [2]string{"web:1", "side:2"} {
		t.Fatalf("after Update images %v, want only the sidecar's changed", got)
	}

	steps := []struct {
		name       string
		sidecar    corev1.ContainerStatus
		wantImages [2]string
	}{
		{"the app waits while the sidecar still runs its old image", corev1.ContainerStatus{Name: "sidecar", Image: "side:1", ImageID: "sha256:side1", Ready: true}, [2]string{"web:1", "side:2"}},
		{"the app waits while the sidecar's new container is not ready", corev1.ContainerStatus{Name: "sidecar", Image: "side:2", ImageID: "sha256:side2"}, [2]string{"web:1", "side:2"}},
		{"the app's image is written once the sidecar's new container is ready", corev1.ContainerStatus{Name: "sidecar", Image: "side:2", ImageID: "sha256:side2", Ready: true}, [2]string{"web:2", "side:2"}},
	}
	for _, s := range steps {
		p := get()
		p.Status.ContainerStatuses[1] = s.sidecar
		if err := c.Status().Update(ctx, p); err != nil {
			t.Fatal(err)
		}
		res, err := u.Refresh(ctx, get())
		if err != nil {
			t.Fatal(err)
		}
		if !res.Updating {
			t.Errorf("%s: Refresh says the update finished", s.name)
		}
		if got := images(get()); got != s.wantImages {
			t.Errorf("%s: images %v, want %v", s.name, got, s.wantImages)
		}
	}
	final := get()
	state, err := State(final)
	if err != nil || state == nil {
		t.Fatalf("state %v, %v", state, err)
	}
	if Completed(final, state) {
		t.Errorf("the update counts as finished before the app runs its new image")
	}
	final.Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "main", Image: "web:2", ImageID: "sha256:web2", Ready: true}
	if !Completed(final, state) {
		t.Errorf("the update does not count as finished with both containers on their new images: state %+v", state)
	}
}

// TestGracePeriodHoldsOnlyTheFirstBatch checks that with a grace period the grace annotation
// holds the first batch's images, the later batch waits in the state, and once the grace period
// has passed the first batch's images are written and its record carries that time.
func TestGracePeriodHoldsOnlyTheFirstBatch(t *testing.T) {
	ctx := context.Background()
	pod := prioritizedPod()
	c := testclient.New(pod)
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(start)
	u := &Updater{Client: c, Clock: clk, RevisionLabel: "controller-revision-hash"}
	written, err := u.Update(ctx, pod, &Plan{Revision: "v2", ContainerImages: map[string]string{"main": "web:2", "sidecar": "side:2"}, GraceSeconds: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got := written.Annotations[appspub.InPlaceUpdateGraceKey]; got != `{"revision":"v2","containerImages":{"sidecar":"side:2"},"graceSeconds":5}` {
		t.Errorf("grace annotation %s, want only the sidecar's image", got)
	}
	state, err := State(written)
	if err != nil || state == nil || state.NextContainerImages["main"] != "web:2" {
		t.Errorf("state %+v (%v), want the app's image waiting", state, err)
	}

	clk.SetTime(start.Add(5 * time.Second))
	if _, err := u.Refresh(ctx, written); err != nil {
		t.Fatal(err)
	}
	after := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), after); err != nil {
		t.Fatal(err)
	}
	if got := [2]string{after.Spec.Containers[0].Image, after.Spec.Containers[1].Image}; got != [2]string{"web:1", "side:2"} {
		t.Errorf("images after the grace period %v, want only the sidecar's changed", got)
	}
	state, err = State(after)
	if err != nil || state == nil || len(state.ContainerBatchesRecord) != 1 || !state.ContainerBatchesRecord[0].Timestamp.Time.Equal(start.Add(5*time.Second)) {
		t.Errorf("state %+v (%v), want the sidecar's batch recorded when the grace period ended", state, err)
	}
}

// TestLabelReadOnlyByALaterBatchWaitsWithIt checks an update that changes the sidecar's image and
// a label only the app reads through env: the label is not written with the sidecar's batch (the
// daemon would restart the app at once) but waits in nextContainerRefMetadata, and is written
// with the app's batch.
func TestLabelReadOnlyByALaterBatchWaitsWithIt(t *testing.T) {
	ctx := context.Background()
	pod := prioritizedPod()
	pod.Labels = map[string]string{"track": "stable", "app": "web"}
	c := testclient.New(pod)
	u := &Updater{Client: c, Clock: clocktesting.NewFakePassiveClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)), RevisionLabel: "controller-revision-hash"}
	canary, tier := "canary", "gold"
	plan := &Plan{Revision: "v2", ContainerImages: map[string]string{"sidecar": "side:2"},
		Labels:                map[string]*string{"track": &canary, "tier": &tier},
		UpdateEnvFromMetadata: true,
		ContainerRefMetadata:  map[string]metav1.ObjectMeta{"main": {Labels: map[string]string{"track": "canary"}}}}
	written, err := u.Update(ctx, pod, plan)
	if err != nil {
		t.Fatal(err)
	}
	if got := written.Labels; got["track"] != "stable" || got["tier"] != "gold" {
		t.Errorf("labels after the first batch %v, want track still stable and tier gold", got)
	}
	state, err := State(written)
	if err != nil || state == nil || state.NextContainerRefMetadata["main"].Labels["track"] != "canary" {
		t.Fatalf("state %+v (%v), want the app's label waiting", state, err)
	}
	// The sidecar runs its new image and is ready, and the daemon reports every container with
	// the env the labels give (no container reads a changed label yet).
	written.Status.ContainerStatuses[1] = corev1.ContainerStatus{Name: "sidecar", Image: "side:2", ImageID: "sha256:side2", Ready: true}
	meta := runtimeMeta(t, written)
	if err := c.Status().Update(ctx, written); err != nil {
		t.Fatal(err)
	}
	written.Annotations[appspub.RuntimeContainerMetaKey] = meta
	if err := c.Update(ctx, written); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Refresh(ctx, written); err != nil {
		t.Fatal(err)
	}
	got := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
		t.Fatal(err)
	}
	if got.Labels["track"] != "canary" {
		t.Errorf("labels after the app's batch %v, want track canary", got.Labels)
	}
	if s, _ := State(got); s == nil || hasNext(s) || len(s.ContainerBatchesRecord) != 2 {
		t.Errorf("state after the app's batch %+v, want nothing waiting and two batches", s)
	}
}

// runtimeMeta is the daemon's runtime-containers-meta for p as it runs now: each container's
// ID from its status and the env hash p's metadata gives.
func runtimeMeta(t *testing.T, p *corev1.Pod) string {
	t.Helper()
	set := appspub.RuntimeContainerMetaSet{}
	for i := range p.Spec.Containers {
		c := &p.Spec.Containers[i]
		id := "containerd://" + c.Name
		for j := range p.Status.ContainerStatuses {
			if p.Status.ContainerStatuses[j].Name == c.Name {
				p.Status.ContainerStatuses[j].ContainerID = id
			}
		}
		set.Containers = append(set.Containers, appspub.RuntimeContainerMeta{Name: c.Name, ContainerID: id,
			Hashes: appspub.RuntimeContainerHashes{ExtractedEnvFromMetadataHash: envhash.Expected(c, p)}})
	}
	raw, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
