package framework

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ChartMemoryLimitMB is the memory limit the chart gives the manager (1Gi): a manager that
// passes it is OOM-killed, and with it every workload of the cluster stops being reconciled.
const ChartMemoryLimitMB = 1024

// HugeReplicas is the replica count of the huge-replicas tests, the largest spec.replicas the
// API takes: a workload that built anything per replica before its pods exist would need
// gigabytes for it.
const HugeReplicas = math.MaxInt32

// Defaults of a HugeScale.
const (
	// hugePods is how many pods a huge workload creates before it is scaled to 0: past the slow
	// start, so that batches are at their largest.
	hugePods = 600
	// hugeGrowthMB bounds the growth of the live heap while it creates them: mostly the caches'
	// copies of those pods. Anything built per replica passes it at once.
	hugeGrowthMB = 64
	// hugeScaleOut bounds the wait for them at the manager's client QPS, hugeDrain the wait for
	// every pod to go.
	hugeScaleOut, hugeDrain = 3 * time.Minute, 3 * time.Minute
)

// heapWatchPeriod is how often WatchHeap reads the heap: fast enough that an allocation of a
// gigabyte a second is caught within tens of megabytes.
const heapWatchPeriod = 10 * time.Millisecond

// HeapInuseMB is this process's in-use heap after a garbage collection, in MB: what its live
// objects, an in-process manager's among them, hold.
func HeapInuseMB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapInuse) / (1 << 20)
}

// heapObjectsMB is the memory this process's heap objects occupy now, live ones and garbage not
// yet swept, in MB. It is read without a garbage collection or a stop of the world.
func heapObjectsMB() float64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return float64(s[0].Value.Uint64()) / (1 << 20)
}

// WatchHeap reads this process's heap every 10 ms until the test ends, and ends the whole test
// binary, failing, as soon as it passes ceilingMB. An in-process controller that allocates
// without bound cannot be stopped from a test goroutine: left to run, it would take the
// machine's memory long before a test's next look, so the bound is enforced where it is seen.
func WatchHeap(t testing.TB, ceilingMB float64) {
	t.Helper()
	stop := make(chan struct{})
	done := make(chan struct{})
	name := t.Name()
	go func() {
		defer close(done)
		tick := time.NewTicker(heapWatchPeriod)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if mb := heapObjectsMB(); mb > ceilingMB {
				fmt.Fprintf(os.Stderr, "--- FAIL: %s: this process's heap, which holds the manager, reached %.0f MB, past the bound of %.0f MB; "+
					"the test binary ends now, since nothing in a test can stop the manager's allocation\n", name, mb, ceilingMB)
				os.Exit(1)
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

// HeapBound bounds the growth of this process's live heap, which holds the in-process manager,
// while a test runs a huge workload: Check measures it after a garbage collection and fails the
// test past GrowthMB over the baseline taken when it was made, and WatchHeap guards the chart's
// memory limit in between.
type HeapBound struct {
	t testing.TB
	// What names what is measured, in messages.
	What string
	// GrowthMB is the bound; BaselineMB and PeakMB are the live heap when the bound was made
	// and the highest Check saw.
	GrowthMB, BaselineMB, PeakMB float64
}

// BoundHeap takes the baseline of a HeapBound of growthMB (64 MB when 0) and starts WatchHeap
// with the chart's memory limit for the manager.
func BoundHeap(t testing.TB, what string, growthMB float64) *HeapBound {
	t.Helper()
	WatchHeap(t, ChartMemoryLimitMB)
	b := &HeapBound{t: t, What: what, GrowthMB: cmp.Or(growthMB, hugeGrowthMB), BaselineMB: HeapInuseMB()}
	b.PeakMB = b.BaselineMB
	return b
}

// Check measures the live heap and fails the test at once when it grew past the bound.
func (b *HeapBound) Check() {
	b.t.Helper()
	b.PeakMB = max(b.PeakMB, HeapInuseMB())
	if grown := b.PeakMB - b.BaselineMB; grown > b.GrowthMB {
		b.t.Fatalf("the live heap grew by %.0f MB (from %.0f MB) while %s; bound %.0f MB", grown, b.BaselineMB, b.What, b.GrowthMB)
	}
}

// Log reports the baseline and the peak.
func (b *HeapBound) Log() {
	b.t.Helper()
	b.t.Logf("live heap after GC: %.0f MB before, peak %.0f MB while %s (+%.0f MB; bound +%.0f MB)",
		b.BaselineMB, b.PeakMB, b.What, b.PeakMB-b.BaselineMB, b.GrowthMB)
}

// PodTally remembers the name of every pod a namespace ever had, from a watch that starts when
// it is made, so that pods created and deleted between two lists are counted too.
type PodTally struct {
	mu   sync.Mutex
	ns   string
	seen map[string]bool
	// sentinel is closed when the pod named tallySentinel is seen: every event before its
	// creation has been delivered by then.
	sentinel chan struct{}
}

// tallySentinel names the pod EverSeen creates to know the watch has caught up.
const tallySentinel = "tally-sentinel"

// WatchPods lists the pods of ns that selector matches (every pod when it is ""), hands each
// to listed, and then hands every later event to event, from a watch that resumes after errors,
// until the test ends.
func (e *Env) WatchPods(t testing.TB, ns, selector string, listed func(*corev1.Pod), event func(watch.EventType, *corev1.Pod)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	list, err := e.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		listed(&list.Items[i])
	}
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.LabelSelector = selector
		return e.Clientset.CoreV1().Pods(ns).Watch(ctx, o)
	}}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, lw)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				if p, ok := ev.Object.(*corev1.Pod); ok {
					event(ev.Type, p)
				}
			}
		}
	}()
}

// TallyPods starts a PodTally of ns that runs until the test ends.
func (e *Env) TallyPods(t testing.TB, ns string) *PodTally {
	t.Helper()
	pt := &PodTally{ns: ns, seen: map[string]bool{}, sentinel: make(chan struct{})}
	e.WatchPods(t, ns, "", pt.add, func(_ watch.EventType, p *corev1.Pod) { pt.add(p) })
	return pt
}

func (pt *PodTally) add(p *corev1.Pod) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if p.Name != tallySentinel {
		pt.seen[p.Name] = true
		return
	}
	select {
	case <-pt.sentinel:
	default:
		close(pt.sentinel)
	}
}

// EverSeen returns the name of every pod the namespace had, once the watch has delivered
// everything that happened before this call: it creates a sentinel pod and waits for it.
func (pt *PodTally) EverSeen(t testing.TB, c client.Client) map[string]bool {
	t.Helper()
	Create(t, c, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: tallySentinel, Namespace: pt.ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example.com/sentinel:1"}}},
	})
	select {
	case <-pt.sentinel:
	case <-time.After(Medium):
		t.Fatalf("the pod watch did not deliver the sentinel pod within %s", Medium)
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	out := make(map[string]bool, len(pt.seen))
	for n := range pt.seen {
		out[n] = true
	}
	return out
}

// PodNames names the pods of ns, terminating ones too; the tally's sentinel is not one.
func (e *Env) PodNames(ctx context.Context, ns string) (map[string]bool, error) {
	var list corev1.PodList
	if err := e.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(list.Items))
	for _, p := range list.Items {
		if p.Name != tallySentinel {
			out[p.Name] = true
		}
	}
	return out, nil
}

// HugeScale is the scenario of every huge-replicas test: a workload asks for more pods than any
// cluster could run, alone in its namespace, with the manager running in this process.
//   - While it creates its first Pods pods, this process's live heap (after a garbage
//     collection) grows by at most GrowthMB, and its heap never passes the chart's memory limit
//     for the manager (WatchHeap ends the test binary the moment it does).
//   - Once Stop (a scale to 0, or a deletion) has returned, at most AfterStop more pods are
//     created (the batches under way), and every pod of the namespace goes.
type HugeScale struct {
	// Namespace holds the workload and nothing else.
	Namespace string
	// What names the workload in messages, such as "a 2147483647-replica StatefulSet".
	What string
	// Pods is how many pods it must create before it is scaled to 0 (600 when 0).
	Pods int
	// GrowthMB bounds the growth of the live heap while it creates them (64 MB when 0).
	GrowthMB float64
	// AfterStop bounds the pods created after Stop returned.
	AfterStop int
	// ScaleOut bounds the wait for the first Pods pods, Drain the wait for every pod to go
	// (3 minutes each when 0).
	ScaleOut, Drain time.Duration
	// Create creates the workload; Stop scales it to 0 or deletes it, and returns once the
	// controllers that create its pods have been told.
	Create, Stop func(t *testing.T)
}

// HugeScaleResult is what a HugeScale measured.
type HugeScaleResult struct {
	// BaselineMB and PeakMB are the live heap before the workload existed and the highest seen
	// while it created its first pods.
	BaselineMB, PeakMB float64
	// AtStop is how many pods existed when Stop returned; AfterStop how many were created
	// after it.
	AtStop, AfterStop int
}

// RunHugeScale runs h and fails t when a bound is crossed.
func (e *Env) RunHugeScale(t *testing.T, h HugeScale) HugeScaleResult {
	t.Helper()
	h.Pods = cmp.Or(h.Pods, hugePods)
	h.ScaleOut, h.Drain = cmp.Or(h.ScaleOut, hugeScaleOut), cmp.Or(h.Drain, hugeDrain)
	tally := e.TallyPods(t, h.Namespace)
	heap := BoundHeap(t, fmt.Sprintf("%s created its first %d pods", h.What, h.Pods), h.GrowthMB)
	h.Create(t)
	Eventually(t, h.ScaleOut, fmt.Sprintf("%d pods of %s exist", h.Pods, h.What), func(ctx context.Context) error {
		heap.Check()
		pods, err := e.PodNames(ctx, h.Namespace)
		if err != nil {
			return err
		}
		return Want(len(pods) >= h.Pods, fmt.Sprintf("%d pods", len(pods)))
	})
	heap.Log()
	res := HugeScaleResult{BaselineMB: heap.BaselineMB, PeakMB: heap.PeakMB}

	h.Stop(t)
	atStop, err := e.PodNames(context.Background(), h.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	Eventually(t, h.Drain, fmt.Sprintf("every pod of %s is gone once it was stopped", h.What), func(ctx context.Context) error {
		pods, err := e.PodNames(ctx, h.Namespace)
		if err != nil {
			return err
		}
		return Want(len(pods) == 0, fmt.Sprintf("%d pods left", len(pods)))
	})
	res.AtStop = len(atStop)
	for name := range tally.EverSeen(t, e.Client) {
		if !atStop[name] {
			res.AfterStop++
		}
	}
	t.Logf("pods when stopped: %d; created after it: %d (bound %d)", res.AtStop, res.AfterStop, h.AfterStop)
	if res.AfterStop > h.AfterStop {
		t.Errorf("%d pods were created after %s was stopped (%d existed then); at most %d, the batches under way, may follow", res.AfterStop, h.What, res.AtStop, h.AfterStop)
	}
	return res
}
