package podadmission

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllertest"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// oneInformer hands out the one fake informer for every kind.
type oneInformer struct {
	cache.Informers
	inf *controllertest.FakeInformer
}

func (o oneInformer) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return o.inf, nil
}

func deployment(name, uid, ns string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid), Namespace: ns}}
}

// TestSnapshotFollowsTheInformer feeds one informer a sequence of events, each row starting
// from what the rows before left, and reads the names the snapshot holds under each key.
func TestSnapshotFollowsTheInformer(t *testing.T) {
	inf := controllertest.NewFakeInformer()
	snap, err := WatchSnapshot(context.Background(), oneInformer{inf: inf}, &appsv1.Deployment{},
		func(d *appsv1.Deployment) []string { return []string{d.Namespace, "*"} })
	if err != nil {
		t.Fatal(err)
	}
	names := func(key string) []string {
		got, ok := snap.Get(key)
		if !ok {
			return []string{"not synced"}
		}
		var out []string
		for _, d := range got {
			out = append(out, d.Name)
		}
		return out
	}
	steps := []struct {
		name    string
		event   func()
		wantA   []string
		wantB   []string
		wantAll []string
	}{
		{name: "before the informer's first list it is not synced", event: func() { inf.Add(deployment("web", "u1", "a")) },
			wantA: []string{"not synced"}, wantB: []string{"not synced"}, wantAll: []string{"not synced"}},
		{name: "once synced it holds what was added, under each key, by name", event: func() {
			inf.Synced()
			inf.Add(deployment("api", "u2", "a"))
		}, wantA: []string{"api", "web"}, wantAll: []string{"api", "web"}},
		{name: "an update that changes an object's keys moves it", event: func() {
			inf.Update(deployment("web", "u1", "a"), deployment("web", "u1", "b"))
		}, wantA: []string{"api"}, wantB: []string{"web"}, wantAll: []string{"api", "web"}},
		{name: "a delete removes it from every key", event: func() { inf.Delete(deployment("api", "u2", "a")) },
			wantB: []string{"web"}, wantAll: []string{"web"}},
		{name: "deleting the last object of a key empties it", event: func() { inf.Delete(deployment("web", "u1", "b")) }},
		{name: "an update that keeps the keys replaces the object, held once", event: func() {
			inf.Add(deployment("web", "u3", "a"))
			inf.Update(deployment("web", "u3", "a"), deployment("web", "u3", "a"))
		}, wantA: []string{"web"}, wantAll: []string{"web"}},
	}
	for _, s := range steps {
		s.event()
		testkit.Diff(t, s.name+": key a", s.wantA, names("a"))
		testkit.Diff(t, s.name+": key b", s.wantB, names("b"))
		testkit.Diff(t, s.name+": key *", s.wantAll, names("*"))
	}
}

func TestSnapshotUnwrapsADeleteWhoseFinalStateIsUnknown(t *testing.T) {
	inf := controllertest.NewFakeInformer(controllertest.Synced)
	var handler toolscache.ResourceEventHandler
	snap, err := WatchSnapshot(context.Background(), recordingInformers{oneInformer{inf: inf}, &handler}, &appsv1.Deployment{},
		func(d *appsv1.Deployment) []string { return []string{d.Namespace} })
	if err != nil {
		t.Fatal(err)
	}
	handler.OnAdd(deployment("web", "u1", "a"), false)
	handler.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "a/web", Obj: deployment("web", "u1", "a")})
	got, ok := snap.Get("a")
	testkit.Diff(t, "synced", true, ok)
	testkit.Diff(t, "held", 0, len(got))
}

// recordingInformers keeps the handler added to its informer, to send it events by hand.
type recordingInformers struct {
	oneInformer
	handler *toolscache.ResourceEventHandler
}

func (r recordingInformers) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	inf, _ := r.oneInformer.GetInformer(ctx, obj, opts...)
	return recordingInformer{Informer: inf, handler: r.handler}, nil
}

type recordingInformer struct {
	cache.Informer
	handler *toolscache.ResourceEventHandler
}

func (r recordingInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	*r.handler = h
	return r.Informer.AddEventHandler(h)
}

// BenchmarkSnapshotFirstListOf20000 feeds 20,000 objects under one key, as the informer's first
// list of a cluster with 20,000 SidecarSets does at start-up, then reads the key once.
func BenchmarkSnapshotFirstListOf20000(b *testing.B) {
	objs := make([]*appsv1.Deployment, 20000)
	for i := range objs {
		objs[i] = deployment(fmt.Sprintf("d-%05d", (i*7919)%20000), fmt.Sprintf("u%d", i), "a")
	}
	for b.Loop() {
		inf := controllertest.NewFakeInformer(controllertest.Synced)
		snap, err := WatchSnapshot(context.Background(), oneInformer{inf: inf}, &appsv1.Deployment{},
			func(*appsv1.Deployment) []string { return []string{"*"} })
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range objs {
			inf.Add(d)
		}
		if got, _ := snap.Get("*"); len(got) != len(objs) {
			b.Fatalf("%d objects, want %d", len(got), len(objs))
		}
	}
}
