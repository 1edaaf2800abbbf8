package kit

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

// namedAfter names one object after each pod it is told of.
func namedAfter(_ context.Context, obj client.Object) []client.ObjectKey {
	return []client.ObjectKey{{Namespace: obj.GetNamespace(), Name: "of-" + obj.GetName()}}
}

func TestEventsHandler(t *testing.T) {
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	}
	type tcase struct {
		events Events
		send   func(context.Context, workqueue.TypedRateLimitingInterface[reconcile.Request], Events)
		want   []string
	}
	create := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], e Events) {
		e.Handler().Create(ctx, event.CreateEvent{Object: pod("a")}, q)
	}
	update := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], e Events) {
		e.Handler().Update(ctx, event.UpdateEvent{ObjectOld: pod("old"), ObjectNew: pod("new")}, q)
	}
	remove := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], e Events) {
		e.Handler().Delete(ctx, event.DeleteEvent{Object: pod("gone")}, q)
	}
	testkit.Cases(t, map[string]tcase{
		"a creation enqueues what Create names": {events: Events{Create: namedAfter}, send: create, want: []string{"ns/of-a"}},
		"an update enqueues what Update names from both sides": {events: Events{Update: func(ctx context.Context, old, cur client.Object) []client.ObjectKey {
			return append(namedAfter(ctx, old), namedAfter(ctx, cur)...)
		}}, send: update, want: []string{"ns/of-old", "ns/of-new"}},
		"a deletion enqueues what Delete names":          {events: Events{Delete: namedAfter}, send: remove, want: []string{"ns/of-gone"}},
		"an event of a kind left unset enqueues nothing": {events: Events{Create: namedAfter}, send: remove, want: nil},
	}, func(t *testing.T, c tcase) {
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		defer q.ShutDown()
		c.send(context.Background(), q, c.events)
		var got []string
		for q.Len() > 0 {
			r, _ := q.Get()
			got = append(got, r.String())
			q.Done(r)
		}
		testkit.Diff(t, "enqueued", c.want, got)
	})
}

func TestOnUpdate(t *testing.T) {
	labelled := func(v string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"k": v}}}
	}
	labelsChanged := func(old, cur client.Object) bool { return old.GetLabels()["k"] != cur.GetLabels()["k"] }
	p := onUpdate(labelsChanged)
	got := map[string]bool{
		"create":          p.Create(event.CreateEvent{Object: labelled("a")}),
		"delete":          p.Delete(event.DeleteEvent{Object: labelled("a")}),
		"update, changed": p.Update(event.UpdateEvent{ObjectOld: labelled("a"), ObjectNew: labelled("b")}),
		"update, same":    p.Update(event.UpdateEvent{ObjectOld: labelled("a"), ObjectNew: labelled("a")}),
	}
	want := map[string]bool{"create": true, "delete": true, "update, changed": true, "update, same": false}
	testkit.Diff(t, "passed", want, got)
}

func TestListKeys(t *testing.T) {
	list := &corev1.PodList{Items: []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}, {ObjectMeta: metav1.ObjectMeta{Name: "b"}}}}
	testkit.Diff(t, "keys", []client.ObjectKey{{Namespace: "ns", Name: "a"}, {Name: "b"}}, ListKeys(list))
}
