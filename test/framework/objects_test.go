package framework_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

func TestKitObjects(t *testing.T) {
	ns := framework.NewNamespace(t, env.Client, "kit-objects-", nil)
	key := client.ObjectKey{Namespace: ns, Name: "cm"}
	framework.Create(t, env.Client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}})

	t.Run("Change writes f's change over a concurrent write, and Get reads it back", func(t *testing.T) {
		first := true
		framework.Change(t, env.Client, key, func(cm *corev1.ConfigMap) {
			if first {
				// Another writer gets in between this read and the update: a conflict.
				first = false
				other := framework.Get[corev1.ConfigMap](t, env.Client, key)
				other.Data = map[string]string{"other": "x"}
				if err := env.Client.Update(context.Background(), other); err != nil {
					t.Fatal(err)
				}
			}
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data["mine"] = "y"
		})
		got := framework.Get[corev1.ConfigMap](t, env.Client, key)
		if got.Data["other"] != "x" || got.Data["mine"] != "y" {
			t.Fatalf("data %v, want both writes", got.Data)
		}
	})
	t.Run("Get and Change fail the test naming the kind and the name", func(t *testing.T) {
		missing := client.ObjectKey{Namespace: ns, Name: "missing"}
		r := &recorder{TB: t}
		framework.Get[corev1.ConfigMap](r, env.Client, missing)
		framework.Change(r, env.Client, missing, func(*corev1.ConfigMap) {})
		if len(r.fatal) != 2 || !strings.HasPrefix(r.fatal[0], "get ConfigMap missing: ") || !strings.HasPrefix(r.fatal[1], "update ConfigMap missing: ") {
			t.Fatalf("failures %q, want a get and an update of ConfigMap missing", r.fatal)
		}
	})
	t.Run("LivePods lists the app's pods that are not terminating, by name", func(t *testing.T) {
		for _, name := range []string{"web-b", "web-a"} {
			framework.Create(t, env.Client, builder.Pod(name, ns).Label("app", "web").Obj())
		}
		framework.Create(t, env.Client, builder.Pod("db-a", ns).Label("app", "db").Obj())
		going := builder.Pod("web-c", ns).Label("app", "web").Obj()
		going.Finalizers = []string{"kruise.io/test"}
		framework.Create(t, env.Client, going)
		if err := env.Client.Delete(context.Background(), going); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = env.Client.Patch(context.Background(), going, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))
		})
		var names []string
		for _, p := range framework.MustLivePods(t, env.Client, ns, "web") {
			names = append(names, p.Name)
		}
		if strings.Join(names, ",") != "web-a,web-b" {
			t.Fatalf("live pods %v, want [web-a web-b]", names)
		}
	})
}

func TestKitPodStatus(t *testing.T) {
	pod := &corev1.Pod{Status: corev1.PodStatus{
		Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.PodScheduled, Status: corev1.ConditionFalse}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "main", RestartCount: 2}},
	}}
	cases := map[string]struct {
		got, want any
	}{
		"PodCondition is the condition's status":           {framework.PodCondition(pod, corev1.PodScheduled), corev1.ConditionFalse},
		"PodCondition is empty for a condition not there":  {framework.PodCondition(pod, corev1.ContainersReady), corev1.ConditionStatus("")},
		"PodReady is true for a True Ready condition":      {framework.PodReady(pod), true},
		"PodReady is false without a Ready condition":      {framework.PodReady(&corev1.Pod{}), false},
		"ContainerStatus finds the container by name":      {framework.ContainerStatus(pod, "main").RestartCount, int32(2)},
		"ContainerStatus is nil for a container not there": {framework.ContainerStatus(pod, "side") == nil, true},
		"PodUIDs maps each pod's name to its UID": {fmt.Sprint(framework.PodUIDs([]corev1.Pod{
			{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "1"}}, {ObjectMeta: metav1.ObjectMeta{Name: "b", UID: "2"}}})), "map[a:1 b:2]"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if c.got != c.want {
				t.Fatalf("got %v, want %v", c.got, c.want)
			}
		})
	}
}

func TestKitSample(t *testing.T) {
	var looks atomic.Int32
	third := make(chan struct{})
	s := framework.Sample(time.Millisecond, func() {
		if looks.Add(1) == 3 {
			close(third)
		}
	})
	select {
	case <-third:
	case <-time.After(framework.Short):
		t.Fatalf("%d looks within %v, want 3", looks.Load(), framework.Short)
	}
	s.Stop()
	after := looks.Load()
	framework.Consistently(t, 5*framework.Poll, "no look after Stop returned", func(context.Context) error {
		return framework.Want(looks.Load() == after, fmt.Sprintf("%d looks after Stop", looks.Load()-after))
	})
}
