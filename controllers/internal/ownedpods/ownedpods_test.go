package ownedpods

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kruise-addon/kruise-addon/controllers/internal/expectations"
	"github.com/kruise-addon/kruise-addon/internal/testkit"
)

var kind = schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "CloneSet"}

func pod(name, owner string, ownerKind string, deleting bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "5"}}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps.kruise.io/v1alpha1", Kind: ownerKind, Name: owner, UID: "o", Controller: ptr.To(true)}}
	}
	if deleting {
		p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	}
	return p
}

func drain(q Queue) []string {
	var out []string
	for q.Len() > 0 {
		req, _ := q.Get()
		out = append(out, req.String())
		q.Done(req)
	}
	return out
}

func newQueue() Queue {
	return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
}

func TestHandler(t *testing.T) {
	type tcase struct {
		handler      Handler
		expectCreate string
		expectDelete string
		event        func(h Handler, q Queue)
		wantQueued   []string
		wantOrphans  []string
		wantPending  bool
	}
	tests := map[string]tcase{
		"a created pod of the kind satisfies its creation and enqueues its owner": {
			expectCreate: "p",
			event:        func(h Handler, q Queue) { h.Create(context.Background(), pod("p", "w", "CloneSet", false), q) },
			wantQueued:   []string{"ns/w"},
		},
		"a creation is observed under CreateName when one is given": {
			handler:      Handler{CreateName: func(client.Object) string { return "node/n1" }},
			expectCreate: "node/n1",
			event:        func(h Handler, q Queue) { h.Create(context.Background(), pod("p", "w", "CloneSet", false), q) },
			wantQueued:   []string{"ns/w"},
		},
		"a pod created already terminating satisfies its deletion too": {
			expectCreate: "p",
			expectDelete: "p",
			event:        func(h Handler, q Queue) { h.Create(context.Background(), pod("p", "w", "CloneSet", true), q) },
			wantQueued:   []string{"ns/w"},
		},
		"a pod of another kind is not observed or enqueued but handed to Orphan": {
			expectCreate: "p",
			event:        func(h Handler, q Queue) { h.Create(context.Background(), pod("p", "w", "StatefulSet", false), q) },
			wantOrphans:  []string{"p"},
			wantPending:  true,
		},
		"a pod without a controller of the kind goes to Orphan": {
			event:       func(h Handler, q Queue) { h.Create(context.Background(), pod("p", "", "", false), q) },
			wantOrphans: []string{"p"},
		},
		"an update that starts a deletion satisfies it": {
			expectDelete: "p",
			event: func(h Handler, q Queue) {
				h.Updated(context.Background(), pod("p", "w", "CloneSet", false), pod("p", "w", "CloneSet", true), q)
			},
			wantQueued: []string{"ns/w"},
		},
		"a released pod enqueues its former owner with EnqueueReleased": {
			handler: Handler{EnqueueReleased: true},
			event: func(h Handler, q Queue) {
				h.Updated(context.Background(), pod("p", "w", "CloneSet", false), pod("p", "", "", false), q)
			},
			wantQueued:  []string{"ns/w"},
			wantOrphans: []string{"p"},
		},
		"a released pod does not enqueue its former owner without EnqueueReleased": {
			event: func(h Handler, q Queue) {
				h.Updated(context.Background(), pod("p", "w", "CloneSet", false), pod("p", "", "", false), q)
			},
			wantOrphans: []string{"p"},
		},
		"an update IgnoreUpdate passes over does not enqueue the owner": {
			handler: Handler{IgnoreUpdate: func(context.Context, reconcile.Request, client.Object, client.Object) bool { return true }},
			event: func(h Handler, q Queue) {
				h.Updated(context.Background(), pod("p", "w", "CloneSet", false), pod("p", "w", "CloneSet", false), q)
			},
		},
		"an update that changes the labels enqueues the owner whatever IgnoreUpdate says": {
			handler: Handler{IgnoreUpdate: func(context.Context, reconcile.Request, client.Object, client.Object) bool { return true }},
			event: func(h Handler, q Queue) {
				labelled := pod("p", "w", "CloneSet", false)
				labelled.Labels = map[string]string{"k": "v"}
				h.Updated(context.Background(), pod("p", "w", "CloneSet", false), labelled, q)
			},
			wantQueued: []string{"ns/w"},
		},
		"an update that starts a deletion enqueues the owner whatever IgnoreUpdate says": {
			handler:      Handler{IgnoreUpdate: func(context.Context, reconcile.Request, client.Object, client.Object) bool { return true }},
			expectDelete: "p",
			event: func(h Handler, q Queue) {
				h.Updated(context.Background(), pod("p", "w", "CloneSet", false), pod("p", "w", "CloneSet", true), q)
			},
			wantQueued: []string{"ns/w"},
		},
		"a deleted pod satisfies its deletion and enqueues its owner": {
			expectDelete: "p",
			event:        func(h Handler, q Queue) { h.Delete(pod("p", "w", "CloneSet", true), q) },
			wantQueued:   []string{"ns/w"},
		},
		"a deleted pod of another kind is neither observed nor enqueued": {
			expectDelete: "p",
			wantPending:  true,
			event:        func(h Handler, q Queue) { h.Delete(pod("p", "w", "StatefulSet", true), q) },
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
		h := tc.handler
		h.Kind = kind
		h.Scale = expectations.NewScale(clk)
		h.Update = expectations.NewResourceVersion(clk)
		var orphans []string
		h.Orphan = func(_ context.Context, p client.Object, _ Queue) { orphans = append(orphans, p.GetName()) }
		if tc.expectCreate != "" {
			h.Scale.Expect("ns/w", expectations.Create, tc.expectCreate)
		}
		if tc.expectDelete != "" {
			h.Scale.Expect("ns/w", expectations.Delete, tc.expectDelete)
		}
		q := newQueue()
		defer q.ShutDown()
		tc.event(h, q)
		testkit.Diff(t, "queued", tc.wantQueued, drain(q))
		testkit.Diff(t, "orphans", tc.wantOrphans, orphans)
		if ok, _ := h.Scale.Satisfied("ns/w"); ok == tc.wantPending {
			t.Errorf("Satisfied() = %v, want %v (pending %v)", ok, !tc.wantPending, h.Scale.Pending("ns/w"))
		}
	})
}

func TestAwaitScale(t *testing.T) {
	type tcase struct {
		expect    bool
		elapsed   time.Duration
		wantWait  bool
		wantAfter bool // what Satisfied says after the call
	}
	tests := map[string]tcase{
		"nothing awaited does not wait":                            {wantAfter: true},
		"a write the cache has not seen waits":                     {expect: true, elapsed: time.Minute, wantWait: true},
		"after the timeout it stops waiting and forgets the write": {expect: true, elapsed: ExpectationTimeout, wantAfter: true},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		clk := clocktesting.NewFakeClock(time.Unix(0, 0))
		exp := expectations.NewScale(clk)
		if tc.expect {
			exp.Expect("ns/w", expectations.Create, "p")
		}
		clk.Step(tc.elapsed)
		if got := AwaitScale(logr.Discard(), exp, "ns/w"); got != tc.wantWait {
			t.Fatalf("AwaitScale() = %v, want %v", got, tc.wantWait)
		}
		if ok, _ := exp.Satisfied("ns/w"); ok != tc.wantAfter {
			t.Errorf("Satisfied() after = %v, want %v", ok, tc.wantAfter)
		}
	})
}

func TestForceDeleteTimeoutExpectationGate(t *testing.T) {
	type tcase struct {
		force       bool
		elapsed     time.Duration
		wantWait    bool
		wantRequeue time.Duration
		wantForgot  bool
	}
	tests := map[string]tcase{
		"with the gate, writes overdue are forgotten and the reconcile looks again in ten seconds": {
			force: true, elapsed: ExpectationTimeout, wantWait: true, wantRequeue: OverdueRequeue, wantForgot: true,
		},
		"with the gate, writes not yet overdue are waited for as usual": {
			force: true, elapsed: time.Minute, wantWait: true, wantRequeue: ExpectationTimeout - time.Minute,
		},
		"writes not yet overdue are looked at again when they would be, unless their events come first": {
			elapsed: time.Minute, wantWait: true, wantRequeue: ExpectationTimeout - time.Minute,
		},
		"without the gate, writes overdue are forgotten and the reconcile acts at once (1.8 would wait on)": {
			elapsed: ExpectationTimeout, wantForgot: true,
		},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		clk := clocktesting.NewFakeClock(time.Unix(0, 0))
		exp := expectations.NewScale(clk)
		exp.Expect("ns/w", expectations.Create, "p")
		clk.Step(tc.elapsed)
		wait, requeue := AwaitScaleFor(logr.Discard(), exp, "ns/w", tc.force)
		testkit.Diff(t, "wait", tc.wantWait, wait)
		testkit.Diff(t, "requeue", tc.wantRequeue, requeue)
		ok, _ := exp.Satisfied("ns/w")
		testkit.Diff(t, "forgot", tc.wantForgot, ok)
	})
}

func TestAwaitUpdates(t *testing.T) {
	type tcase struct {
		cachedRV string
		elapsed  time.Duration
		wantWait bool
	}
	tests := map[string]tcase{
		"a cached copy that includes our update does not wait": {cachedRV: "7"},
		"a cached copy older than our update waits":            {cachedRV: "6", elapsed: time.Minute, wantWait: true},
		"an old cached copy stops waiting after the timeout":   {cachedRV: "6", elapsed: ExpectationTimeout},
	}
	testkit.Cases(t, tests, func(t *testing.T, tc tcase) {
		clk := clocktesting.NewFakeClock(time.Unix(0, 0))
		exp := expectations.NewResourceVersion(clk)
		written := pod("p", "w", "CloneSet", false)
		written.ResourceVersion = "7"
		exp.Expect(written)
		clk.Step(tc.elapsed)
		cached := written.DeepCopy()
		cached.ResourceVersion = tc.cachedRV
		if got := AwaitUpdates(logr.Discard(), exp, []*corev1.Pod{pod("other", "w", "CloneSet", false), cached}); got != tc.wantWait {
			t.Fatalf("AwaitUpdates() = %v, want %v", got, tc.wantWait)
		}
	})
}

func TestParallelCallsEachIndexOnceAndBoundsTheWritesInFlight(t *testing.T) {
	const n = 100
	var mu sync.Mutex
	seen := map[int]int{}
	inFlight, most := 0, 0
	release := make(chan struct{})
	go func() {
		// Let the first wave fill every slot before any call returns.
		for {
			mu.Lock()
			full := inFlight == MaxParallelWrites
			mu.Unlock()
			if full {
				close(release)
				return
			}
			runtime.Gosched()
		}
	}()
	Parallel(n, func(i int) {
		mu.Lock()
		seen[i]++
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
	})
	if len(seen) != n {
		t.Errorf("called %d distinct indexes, want %d", len(seen), n)
	}
	for i, c := range seen {
		if c != 1 {
			t.Errorf("index %d called %d times", i, c)
		}
	}
	if most != MaxParallelWrites {
		t.Errorf("most calls in flight = %d, want %d", most, MaxParallelWrites)
	}
}

// recordingQueue records how each request was added, on top of a real queue.
type recordingQueue struct {
	Queue
	now   []string
	after map[string]time.Duration
}

func (q *recordingQueue) Add(r reconcile.Request) { q.now = append(q.now, r.String()); q.Queue.Add(r) }

func (q *recordingQueue) AddAfter(r reconcile.Request, d time.Duration) {
	q.after[r.String()] = d
	q.Queue.AddAfter(r, d)
}

func TestUpdateBatchDelaysOnlyUpdates(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	h := Handler{Kind: kind, Scale: expectations.NewScale(clk), Update: expectations.NewResourceVersion(clk), UpdateBatch: UpdateBatch}
	q := &recordingQueue{Queue: newQueue(), after: map[string]time.Duration{}}
	defer q.ShutDown()

	h.Create(context.Background(), pod("a", "created", "CloneSet", false), q)
	h.Delete(pod("b", "deleted", "CloneSet", true), q)
	h.Updated(context.Background(), pod("c", "updated", "CloneSet", false), pod("c", "updated", "CloneSet", false), q)
	h.Updated(context.Background(), pod("d", "updated", "CloneSet", false), pod("d", "updated", "CloneSet", false), q)

	testkit.Diff(t, "enqueued at once", []string{"ns/created", "ns/deleted"}, q.now)
	testkit.Diff(t, "enqueued after a delay", map[string]time.Duration{"ns/updated": UpdateBatch}, q.after)
	// The two updates of one workload's pods end in one reconcile once the batch is over.
	deadline := time.Now().Add(time.Minute)
	for q.Len() < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := drain(q); !cmp.Equal(got, []string{"ns/created", "ns/deleted", "ns/updated"}) {
		t.Errorf("queue after the batch = %v, want the two workloads enqueued at once and the updated one once", got)
	}
}
