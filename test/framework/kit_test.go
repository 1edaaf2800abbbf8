package framework_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// recorder is a testing.TB that records Fatalf instead of ending the goroutine.
type recorder struct {
	testing.TB
	fatal []string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = append(r.fatal, fmt.Sprintf(format, args...))
}

var errNotYet = errors.New("not yet")

func TestKitPollUntil(t *testing.T) {
	t.Run("returns nil at the first look that holds", func(t *testing.T) {
		looks := 0
		err := framework.PollUntil(context.Background(), framework.Medium, func(context.Context) error {
			looks++
			if looks < 3 {
				return errNotYet
			}
			return nil
		})
		if err != nil || looks != 3 {
			t.Fatalf("PollUntil = %v after %d looks, want nil after 3", err, looks)
		}
	})
	t.Run("returns the last error, naming the timeout, when the condition never holds", func(t *testing.T) {
		err := framework.PollUntil(context.Background(), 3*framework.Poll, func(context.Context) error { return errNotYet })
		if !errors.Is(err, errNotYet) || !strings.Contains(err.Error(), (3*framework.Poll).String()) {
			t.Fatalf("PollUntil = %v, want %v wrapped with the timeout", err, errNotYet)
		}
	})
	t.Run("stops when its context ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := framework.PollUntil(ctx, framework.Long, func(context.Context) error { return errNotYet })
		if !errors.Is(err, errNotYet) {
			t.Fatalf("PollUntil = %v, want %v", err, errNotYet)
		}
	})
	t.Run("gives each look a live context that ends", func(t *testing.T) {
		err := framework.PollUntil(context.Background(), framework.Short, func(ctx context.Context) error {
			if ctx.Err() != nil {
				return fmt.Errorf("look context already done: %w", ctx.Err())
			}
			if _, ok := ctx.Deadline(); !ok {
				return errors.New("look context has no deadline")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func TestKitEventuallyAndConsistently(t *testing.T) {
	// Each case runs wait on cond, which is handed the count of looks so far, and checks the
	// Fatalf calls it recorded and the looks it took.
	cases := map[string]struct {
		wait    func(t testing.TB, d time.Duration, what string, cond func(context.Context) error)
		d       time.Duration
		what    string
		cond    func(looks int) error
		ok      func(fatal []string, looks int) bool
		wantWhy string
	}{
		"Eventually fails with what and the last error": {
			wait: framework.Eventually, d: 2 * framework.Poll, what: "the thing happens",
			cond: func(int) error { return errNotYet },
			ok: func(fatal []string, _ int) bool {
				return len(fatal) == 1 && strings.HasPrefix(fatal[0], "the thing happens: ") && strings.Contains(fatal[0], errNotYet.Error())
			},
			wantWhy: "want one naming the wait and " + errNotYet.Error(),
		},
		"Eventually passes once the condition holds": {
			wait: framework.Eventually, d: framework.Medium, what: "the thing happens",
			cond:    func(looks int) error { return framework.Want(looks == 2, "first look") },
			ok:      func(fatal []string, looks int) bool { return len(fatal) == 0 && looks == 2 },
			wantWhy: "want none after 2",
		},
		"Consistently fails at the first error": {
			wait: framework.Consistently, d: framework.Medium, what: "nothing happens",
			cond: func(looks int) error { return framework.Want(looks < 3, "it happened") },
			ok: func(fatal []string, looks int) bool {
				return len(fatal) == 1 && looks == 3 && strings.Contains(fatal[0], "nothing happens: it happened")
			},
			wantWhy: "want one after 3",
		},
		"Consistently looks until the duration is over": {
			wait: framework.Consistently, d: 3 * framework.Poll, what: "nothing happens",
			cond:    func(int) error { return nil },
			ok:      func(fatal []string, looks int) bool { return len(fatal) == 0 && looks >= 2 },
			wantWhy: "want none after several",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := &recorder{TB: t}
			looks := 0
			tc.wait(r, tc.d, tc.what, func(context.Context) error {
				looks++
				return tc.cond(looks)
			})
			if !tc.ok(r.fatal, looks) {
				t.Fatalf("Fatalf calls %q after %d looks, %s", r.fatal, looks, tc.wantWhy)
			}
		})
	}
	t.Run("Want", func(t *testing.T) {
		if err := framework.Want(true, "why"); err != nil {
			t.Fatalf("Want(true) = %v", err)
		}
		if err := framework.Want(false, "why"); err == nil || err.Error() != "why" {
			t.Fatalf("Want(false) = %v, want an error saying why", err)
		}
	})
}

func TestKitNamespaceAndCreate(t *testing.T) {
	ns := ""
	t.Run("NewNamespace creates a namespace with the prefix and labels", func(t *testing.T) {
		ns = framework.NewNamespace(t, env.Client, "kit-", map[string]string{"kit": "yes"})
		got, err := env.Clientset.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(ns, "kit-") || got.Labels["kit"] != "yes" {
			t.Fatalf("namespace %s labels %v, want prefix kit- and kit=yes", ns, got.Labels)
		}
	})
	t.Run("the namespace is deleted when the test ends", func(t *testing.T) {
		framework.Eventually(t, framework.Medium, "namespace "+ns+" deleted or terminating", func(ctx context.Context) error {
			got, err := env.Clientset.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if err != nil {
				return framework.Want(apierrors.IsNotFound(err), err.Error())
			}
			return framework.Want(got.DeletionTimestamp != nil, "not being deleted")
		})
	})
}

func TestKitCreate(t *testing.T) {
	ns := newNamespace(t)
	kept := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kept"}}
	temp := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "temp"}}
	t.Run("Create and CreateForTest create", func(t *testing.T) {
		framework.Create(t, env.Client, kept)
		framework.CreateForTest(t, env.Client, temp)
		for _, cm := range []*corev1.ConfigMap{kept, temp} {
			if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("Create fails the test when the apiserver refuses", func(t *testing.T) {
		r := &recorder{TB: t}
		framework.Create(r, env.Client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kept"}})
		if len(r.fatal) != 1 || !strings.Contains(r.fatal[0], "kept") {
			t.Fatalf("Fatalf calls %q, want one naming the object", r.fatal)
		}
	})
	t.Run("only the object of CreateForTest is deleted when the test ends", func(t *testing.T) {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(kept), &corev1.ConfigMap{}); err != nil {
			t.Fatalf("the object of Create: %v", err)
		}
		err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(temp), &corev1.ConfigMap{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("the object of CreateForTest: get = %v, want NotFound", err)
		}
	})
}

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
	t.Run("TryChange returns the apiserver's refusal instead of failing the test", func(t *testing.T) {
		fixed := client.ObjectKey{Namespace: ns, Name: "fixed"}
		framework.Create(t, env.Client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fixed.Name}, Immutable: ptr.To(true)})
		err := framework.TryChange(context.Background(), env.Client, fixed, func(cm *corev1.ConfigMap) {
			cm.Data = map[string]string{"k": "v"}
		})
		if !apierrors.IsInvalid(err) {
			t.Fatalf("error %v, want the apiserver's refusal to change an immutable ConfigMap", err)
		}
	})
	t.Run("ChangeStatus writes the status sub-resource", func(t *testing.T) {
		framework.Create(t, env.Client, builder.Pod("status", ns).Obj())
		pod := client.ObjectKey{Namespace: ns, Name: "status"}
		framework.ChangeStatus(t, env.Client, pod, func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
		if got := framework.Get[corev1.Pod](t, env.Client, pod).Status.Phase; got != corev1.PodSucceeded {
			t.Fatalf("phase %q, want %q", got, corev1.PodSucceeded)
		}
	})
	t.Run("WaitFor returns the object check accepted, and fails naming the wait when none is", func(t *testing.T) {
		looks := 0
		got := framework.WaitFor(t, env.Client, key, framework.Medium, "the ConfigMap is read twice", func(cm *corev1.ConfigMap) error {
			looks++
			return framework.Want(looks == 2, "first look")
		})
		if got == nil || got.Name != key.Name || looks != 2 {
			t.Fatalf("got %v after %d looks, want ConfigMap %s after 2", got, looks, key.Name)
		}
		r := &recorder{TB: t}
		framework.WaitFor(r, env.Client, key, 2*framework.Poll, "never", func(*corev1.ConfigMap) error { return errNotYet })
		if len(r.fatal) != 1 || !strings.HasPrefix(r.fatal[0], "never: ") {
			t.Fatalf("Fatalf calls %q, want one naming the wait", r.fatal)
		}
	})
	t.Run("CreateRefused passes on a refusal naming every want and fails on an acceptance or a refusal missing one", func(t *testing.T) {
		bad := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "Not_A_Name"}}
		framework.CreateRefused(t, env.Client, bad, "metadata.name", "Not_A_Name")
		r := &recorder{TB: t}
		framework.CreateRefused(r, env.Client, bad, "metadata.name", "no such words")
		framework.CreateRefused(r, env.Client, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fine"}}, "metadata.name")
		if len(r.fatal) != 2 || !strings.Contains(r.fatal[0], `does not name "no such words"`) || !strings.HasPrefix(r.fatal[1], "accepted; ") {
			t.Fatalf("failures %q, want one for the missing words and one for the acceptance", r.fatal)
		}
	})
	t.Run("SetPodCondition adds a condition once and then replaces it", func(t *testing.T) {
		framework.Create(t, env.Client, builder.Pod("cond", ns).Obj())
		pod := client.ObjectKey{Namespace: ns, Name: "cond"}
		framework.SetPodCondition(t, env.Client, pod, "example.com/gate", corev1.ConditionFalse)
		framework.SetPodCondition(t, env.Client, pod, "example.com/gate", corev1.ConditionTrue)
		got := framework.Get[corev1.Pod](t, env.Client, pod)
		var seen []corev1.ConditionStatus
		for _, c := range got.Status.Conditions {
			if c.Type == "example.com/gate" {
				seen = append(seen, c.Status)
			}
		}
		if diff := cmp.Diff([]corev1.ConditionStatus{corev1.ConditionTrue}, seen); diff != "" {
			t.Fatalf("gate conditions (-want +got):\n%s", diff)
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
	t.Run("WaitForPods hands check the app's live pods and returns those it accepted", func(t *testing.T) {
		looks := 0
		got := framework.WaitForPods(t, env.Client, ns, "web", framework.Medium, "the pods are read twice", func(pods []corev1.Pod) error {
			looks++
			return framework.Want(looks == 2 && len(pods) == 2, fmt.Sprintf("look %d, %d pods", looks, len(pods)))
		})
		if len(got) != 2 || got[0].Name != "web-a" || looks != 2 {
			t.Fatalf("got %d pods after %d looks, want web-a and web-b after 2", len(got), looks)
		}
	})
	t.Run("MergePatch sets and removes a label, and fails the test naming the object when refused", func(t *testing.T) {
		pod := builder.Pod("patched", ns).Label("hold", "true").Obj()
		framework.Create(t, env.Client, pod)
		framework.MergePatch(t, env.Client, pod.DeepCopy(), `{"metadata":{"labels":{"hold":null,"kit":"yes"}}}`)
		got := framework.Get[corev1.Pod](t, env.Client, client.ObjectKeyFromObject(pod))
		if _, held := got.Labels["hold"]; held || got.Labels["kit"] != "yes" {
			t.Fatalf("labels %v, want hold removed and kit=yes", got.Labels)
		}
		r := &recorder{TB: t}
		framework.MergePatch(r, env.Client, builder.Pod("missing", ns).Obj(), `{"metadata":{"labels":{"kit":"yes"}}}`)
		if len(r.fatal) != 1 || !strings.Contains(r.fatal[0], "missing") {
			t.Fatalf("Fatalf calls %q, want one naming the pod", r.fatal)
		}
	})
	t.Run("WaitForEvent passes on an event of the namespace that matches and fails naming the wait when none does", func(t *testing.T) {
		framework.Create(t, env.Client, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: "web-a.started"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "web-a"},
			Reason:         "Started", Type: corev1.EventTypeNormal,
		})
		framework.WaitForEvent(t, env.Client, ns, framework.Medium, "web-a started", func(e *corev1.Event) bool {
			return e.InvolvedObject.Name == "web-a" && e.Reason == "Started"
		})
		r := &recorder{TB: t}
		framework.WaitForEvent(r, env.Client, ns, 2*framework.Poll, "web-a failed", func(e *corev1.Event) bool { return e.Reason == "Failed" })
		if len(r.fatal) != 1 || !strings.HasPrefix(r.fatal[0], "web-a failed: ") || !strings.Contains(r.fatal[0], "Pod/web-a Started") {
			t.Fatalf("Fatalf calls %q, want one naming the wait and the events seen", r.fatal)
		}
	})
	t.Run("Delete and WaitGone: the object is gone, and WaitGone fails naming the wait while it is not", func(t *testing.T) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "doomed"}}
		framework.Create(t, env.Client, cm)
		r := &recorder{TB: t}
		framework.WaitGone(r, env.Client, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}, 2*framework.Poll, "doomed gone")
		if len(r.fatal) != 1 || !strings.HasPrefix(r.fatal[0], "doomed gone: ") {
			t.Fatalf("Fatalf calls %q, want one naming the wait while the ConfigMap exists", r.fatal)
		}
		framework.Delete(t, env.Client, cm)
		framework.WaitGone(t, env.Client, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}, framework.Medium, "doomed gone")
		framework.Delete(r, env.Client, cm)
		if len(r.fatal) != 2 || !strings.Contains(r.fatal[1], "doomed") {
			t.Fatalf("Fatalf calls %q, want a second naming the ConfigMap deleted twice", r.fatal)
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
