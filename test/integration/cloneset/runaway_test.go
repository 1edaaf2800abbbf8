package cloneset

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/cloneset"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// Figures and timeouts of the runaway scale-out tests.
const (
	// hugeReplicas is a replica count no test bed could run: the controller must neither build
	// it in memory nor keep creating once told to stop.
	hugeReplicas = 100_000
	// scaleOutPods is how many pods a huge scale-out creates before a test intervenes: past the
	// slow start, so that batches are at CreateBatchLimit.
	scaleOutPods = 600
	// heapBoundMB bounds the growth of this process's live heap (after a GC), which holds the
	// in-process manager, while a huge CloneSet creates its first scaleOutPods pods. Building all
	// 100,000 pods in memory before creating any passes 120 MB within seconds; creating them a
	// batch at a time stays under 20 MB here, mostly the caches' copies of the pods.
	heapBoundMB = 64
	// scaleOut is how long the first scaleOutPods pods may take at the manager's 30 QPS.
	scaleOut = 3 * time.Minute
	// drain is how long deleting them may take.
	drain = 3 * time.Minute
)

// heapInuseMB is this process's in-use heap after a garbage collection, in MB.
func heapInuseMB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapInuse) / (1 << 20)
}

// ownedPods counts the pods in ns controlled by the object with uid, terminating ones too.
func ownedPods(ctx context.Context, ns string, uid types.UID) (map[string]bool, error) {
	var list corev1.PodList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, p := range list.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == uid {
			out[p.Name] = true
		}
	}
	return out, nil
}

func TestHugeReplicasKeepTheManagersMemoryBounded(t *testing.T) {
	ns := newNamespace(t)
	baseline := heapInuseMB()
	create(t, kinds.CloneSet("huge", ns).Replicas(hugeReplicas).Obj())
	uid := getCloneSet(t, ns, "huge").UID

	peak := baseline
	framework.Eventually(t, scaleOut, fmt.Sprintf("%d pods of a %d-replica CloneSet exist", scaleOutPods, hugeReplicas), func(ctx context.Context) error {
		peak = max(peak, heapInuseMB())
		if peak-baseline > heapBoundMB {
			t.Fatalf("the heap grew by %.0f MB (baseline %.0f MB) while a %d-replica CloneSet started; bound %d MB",
				peak-baseline, baseline, hugeReplicas, heapBoundMB)
		}
		pods, err := ownedPods(ctx, ns, uid)
		if err != nil {
			return err
		}
		if len(pods) < scaleOutPods {
			return fmt.Errorf("%d pods", len(pods))
		}
		return nil
	})
	t.Logf("heap in use after GC: baseline %.0f MB, peak %.0f MB while creating the first %d of %d pods (+%.0f MB)",
		baseline, peak, scaleOutPods, hugeReplicas, peak-baseline)

	change(t, ns, "huge", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](0) })
	framework.Eventually(t, drain, "every pod of the CloneSet scaled to 0 is gone", func(ctx context.Context) error {
		pods, err := ownedPods(ctx, ns, uid)
		if err != nil {
			return err
		}
		if len(pods) > 0 {
			return fmt.Errorf("%d pods left", len(pods))
		}
		return nil
	})
	if err := env.Client.Delete(context.Background(), getCloneSet(t, ns, "huge")); err != nil {
		t.Fatal(err)
	}
}

// podTally watches the pods of a namespace and remembers every pod a given owner ever had.
type podTally struct {
	mu   sync.Mutex
	uid  types.UID
	seen map[string]bool
	// sentinel is closed when the pod named sentinelName is seen: every event before its
	// creation has been delivered by then.
	sentinel chan struct{}
	stop     context.CancelFunc
}

const sentinelName = "tally-sentinel"

// tallyPods starts watching ns for pods controlled by uid.
func tallyPods(t *testing.T, ns string, uid types.UID) *podTally {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	list, err := env.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pt := &podTally{uid: uid, seen: map[string]bool{}, sentinel: make(chan struct{}), stop: cancel}
	for i := range list.Items {
		pt.add(&list.Items[i])
	}
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return env.Clientset.CoreV1().Pods(ns).Watch(ctx, o)
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
					pt.add(p)
				}
			}
		}
	}()
	return pt
}

func (pt *podTally) add(p *corev1.Pod) {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if p.Name == sentinelName {
		select {
		case <-pt.sentinel:
		default:
			close(pt.sentinel)
		}
		return
	}
	if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == pt.uid {
		pt.seen[p.Name] = true
	}
}

// everSeen returns every pod of the owner the watch has delivered so far, once it has delivered
// everything that happened before this call: it creates a sentinel pod and waits for it.
func (pt *podTally) everSeen(t *testing.T, ns string) map[string]bool {
	t.Helper()
	create(t, builder.Pod(sentinelName, ns).Obj())
	select {
	case <-pt.sentinel:
	case <-time.After(settle):
		t.Fatalf("the pod watch did not deliver the sentinel pod within %s", settle)
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	out := make(map[string]bool, len(pt.seen))
	for n := range pt.seen {
		out[n] = true
	}
	return out
}

// createdAfter counts the names in all that are not in before.
func createdAfter(before, all map[string]bool) int {
	n := 0
	for name := range all {
		if !before[name] {
			n++
		}
	}
	return n
}

// waitScaledOut waits until the huge CloneSet has at least scaleOutPods pods.
func waitScaledOut(t *testing.T, ns string, uid types.UID) {
	t.Helper()
	framework.Eventually(t, scaleOut, fmt.Sprintf("%d pods of a %d-replica CloneSet exist", scaleOutPods, hugeReplicas), func(ctx context.Context) error {
		pods, err := ownedPods(ctx, ns, uid)
		if err != nil {
			return err
		}
		if len(pods) < scaleOutPods {
			return fmt.Errorf("%d pods", len(pods))
		}
		return nil
	})
}

func waitNoPods(t *testing.T, ns string, uid types.UID, what string) {
	t.Helper()
	framework.Eventually(t, drain, what, func(ctx context.Context) error {
		pods, err := ownedPods(ctx, ns, uid)
		if err != nil {
			return err
		}
		if len(pods) > 0 {
			return fmt.Errorf("%d pods left", len(pods))
		}
		return nil
	})
}

func TestScaleToZeroStopsAHugeScaleOutWithinOneBatch(t *testing.T) {
	ns := newNamespace(t)
	create(t, kinds.CloneSet("huge", ns).Replicas(hugeReplicas).Obj())
	uid := getCloneSet(t, ns, "huge").UID
	tally := tallyPods(t, ns, uid)
	waitScaledOut(t, ns, uid)

	change(t, ns, "huge", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](0) })
	atPatch, err := ownedPods(context.Background(), ns, uid)
	if err != nil {
		t.Fatal(err)
	}
	waitNoPods(t, ns, uid, "every pod of the CloneSet scaled to 0 is gone")
	extra := createdAfter(atPatch, tally.everSeen(t, ns))
	t.Logf("pods at the scale to 0: %d; pods created after it: %d (one batch is at most %d)", len(atPatch), extra, cloneset.CreateBatchLimit)
	if extra > cloneset.CreateBatchLimit {
		t.Errorf("%d pods were created after the scale to 0 (%d existed then); at most one batch, %d, may follow", extra, len(atPatch), cloneset.CreateBatchLimit)
	}
	if err := env.Client.Delete(context.Background(), getCloneSet(t, ns, "huge")); err != nil {
		t.Fatal(err)
	}
}

// gcOnce starts kube-controller-manager's garbage collector for the tests that need it.
var gcOnce struct {
	sync.Once
	err error
}

func TestDeletingAHugeCloneSetMidScaleLeavesNoOrphans(t *testing.T) {
	gcOnce.Do(func() {
		gcOnce.err = env.StartKubeControllers(context.Background(), framework.WithoutKubeScheduler(), framework.WithControllers("garbage-collector-controller"))
	})
	if gcOnce.err != nil {
		t.Fatalf("start kube-controller-manager's garbage collector: %v", gcOnce.err)
	}
	ns := newNamespace(t)
	create(t, kinds.CloneSet("huge", ns).Replicas(hugeReplicas).Obj())
	cs := getCloneSet(t, ns, "huge")
	tally := tallyPods(t, ns, cs.UID)
	waitScaledOut(t, ns, cs.UID)

	if err := env.Client.Delete(context.Background(), cs); err != nil {
		t.Fatal(err)
	}
	atDelete, err := ownedPods(context.Background(), ns, cs.UID)
	if err != nil {
		t.Fatal(err)
	}
	waitNoPods(t, ns, cs.UID, "the garbage collector removes every pod of the deleted CloneSet")
	extra := createdAfter(atDelete, tally.everSeen(t, ns))
	t.Logf("pods at the deletion: %d; pods created after it: %d (one batch is at most %d)", len(atDelete), extra, cloneset.CreateBatchLimit)
	if extra > cloneset.CreateBatchLimit {
		t.Errorf("%d pods were created after the CloneSet was deleted (%d existed then); at most one batch, %d, may follow", extra, len(atDelete), cloneset.CreateBatchLimit)
	}
}
