package statefulset

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

	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
	"github.com/kruise-addon/kruise-addon/controllers/statefulset"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// Figures and timeouts of the runaway scale-out tests.
const (
	// hugeReplicas is a replica count no test bed could run: the controller must neither build
	// it in memory nor keep creating once told to stop.
	hugeReplicas = 100_000
	// scaleOutPods is how many pods a huge scale-out creates before a test intervenes: past the
	// slow start, so that batches are at statefulset.CreateBatchLimit.
	scaleOutPods = 600
	// heapBoundMB bounds the growth of this process's live heap (after a GC), which holds the
	// in-process manager, while a huge StatefulSet creates its first scaleOutPods pods.
	heapBoundMB = 64
	// scaleOut is how long the first scaleOutPods pods may take at the manager's client QPS.
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

// ownedPods names the pods in ns controlled by the object with uid, terminating ones too.
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

func waitNoPods(t *testing.T, ns string, uid types.UID, what string) {
	t.Helper()
	framework.Eventually(t, drain, what, func(ctx context.Context) error {
		pods, err := ownedPods(ctx, ns, uid)
		if err != nil {
			return err
		}
		return framework.Want(len(pods) == 0, fmt.Sprintf("%d pods left", len(pods)))
	})
}

func TestHugeReplicasKeepTheManagersMemoryBoundedAndScaleToZeroStopsCreation(t *testing.T) {
	ns := newNamespace(t)
	baseline := heapInuseMB()
	framework.Create(t, env.Client, newSet("huge", ns, hugeReplicas, parallel))
	uid := mustGetSet(t, ns, "huge").UID
	tally := tallyPods(t, ns, uid)

	peak := baseline
	framework.Eventually(t, scaleOut, fmt.Sprintf("%d pods of a %d-replica StatefulSet exist", scaleOutPods, hugeReplicas), func(ctx context.Context) error {
		peak = max(peak, heapInuseMB())
		if peak-baseline > heapBoundMB {
			t.Fatalf("the heap grew by %.0f MB (baseline %.0f MB) while a %d-replica StatefulSet started; bound %d MB", peak-baseline, baseline, hugeReplicas, heapBoundMB)
		}
		pods, err := ownedPods(ctx, ns, uid)
		if err != nil {
			return err
		}
		return framework.Want(len(pods) >= scaleOutPods, fmt.Sprintf("%d pods", len(pods)))
	})
	t.Logf("heap in use after GC: baseline %.0f MB, peak %.0f MB while creating the first %d of %d pods (+%.0f MB)", baseline, peak, scaleOutPods, hugeReplicas, peak-baseline)

	change(t, ns, "huge", func(s *appsv1beta1.StatefulSet) { s.Spec.Replicas = ptr.To[int32](0) })
	atPatch, err := ownedPods(context.Background(), ns, uid)
	if err != nil {
		t.Fatal(err)
	}
	waitNoPods(t, ns, uid, "every pod of the StatefulSet scaled to 0 is gone")
	extra := 0
	for name := range tally.everSeen(t, ns) {
		if !atPatch[name] {
			extra++
		}
	}
	t.Logf("pods at the scale to 0: %d; pods created after it: %d (one batch is at most %d)", len(atPatch), extra, statefulset.CreateBatchLimit)
	if extra > statefulset.CreateBatchLimit {
		t.Errorf("%d pods were created after the scale to 0 (%d existed then); at most one batch, %d, may follow", extra, len(atPatch), statefulset.CreateBatchLimit)
	}
}

// podTally watches the pods of a namespace and remembers every pod a given owner ever had.
type podTally struct {
	mu       sync.Mutex
	uid      types.UID
	seen     map[string]bool
	sentinel chan struct{}
}

const sentinelName = "tally-sentinel"

func tallyPods(t *testing.T, ns string, uid types.UID) *podTally {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	list, err := env.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pt := &podTally{uid: uid, seen: map[string]bool{}, sentinel: make(chan struct{})}
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

// everSeen returns every pod of the owner the watch has delivered, once it has delivered
// everything that happened before this call: it creates a sentinel pod and waits for it.
func (pt *podTally) everSeen(t *testing.T, ns string) map[string]bool {
	t.Helper()
	framework.Create(t, env.Client, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: sentinelName, Namespace: ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: imageV1}}},
	})
	select {
	case <-pt.sentinel:
	case <-time.After(framework.Medium):
		t.Fatalf("the pod watch did not deliver the sentinel pod within %s", framework.Medium)
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	out := make(map[string]bool, len(pt.seen))
	for n := range pt.seen {
		out[n] = true
	}
	return out
}
