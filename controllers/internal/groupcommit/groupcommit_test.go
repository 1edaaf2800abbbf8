package groupcommit

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// spreadWith is a WorkloadSpread of one subset whose status exists, the object the tests
// record pods into.
func spreadWith() *appsv1alpha1.WorkloadSpread {
	ws := kinds.WorkloadSpread("ws", "ns").Target("apps.kruise.io/v1alpha1", "CloneSet", "web").ZoneSubset("a", "zone-a", "100").Obj()
	ws.UID = "ws-uid"
	ws.Status.SubsetStatuses = []appsv1alpha1.WorkloadSpreadSubsetStatus{{Name: "a", MissingReplicas: 100}}
	return ws
}

// record is a change that records pod in the subset's creatingPods, changing nothing when it is
// there already.
func record(pod string) Change[*appsv1alpha1.WorkloadSpread] {
	return func(cur *appsv1alpha1.WorkloadSpread) (bool, error) {
		st := &cur.Status.SubsetStatuses[0]
		if _, ok := st.CreatingPods[pod]; ok {
			return false, nil
		}
		if st.CreatingPods == nil {
			st.CreatingPods = map[string]metav1.Time{}
		}
		st.CreatingPods[pod] = metav1.Now()
		return true, nil
	}
}

// A burst of changes to one object must not queue one status write per change: the changes
// that arrive while a write is in flight go out together in the next one, and every change is
// still written.
func TestChangesArrivingDuringAWriteGoOutTogetherInTheNextWrite(t *testing.T) {
	ctx := context.Background()
	ws := spreadWith()
	release := make(chan struct{})
	var writes atomic.Int32
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(ws).WithStatusSubresource(ws).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				if writes.Add(1) == 1 {
					<-release // the first write is in flight until the others have queued
				}
				return c.SubResource(sub).Update(ctx, obj, opts...)
			},
		}).Build()
	w := New[appsv1alpha1.WorkloadSpread](c, c, retry.DefaultRetry)

	const n = 10
	errs := make(chan error, n)
	go func() { errs <- w.Update(ctx, ws, record("pod-0")) }()
	require.Eventually(t, func() bool { return writes.Load() == 1 }, 10*time.Second, time.Millisecond, "the first write never started")
	for i := 1; i < n; i++ {
		go func() { errs <- w.Update(ctx, ws, record(fmt.Sprintf("pod-%d", i))) }()
	}
	require.Eventually(t, func() bool { return w.Waiting(ws.UID) == n-1 }, 10*time.Second, time.Millisecond, "the other changes never queued")
	close(release)
	for range n {
		require.NoError(t, <-errs)
	}

	got := &appsv1alpha1.WorkloadSpread{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(ws), got))
	require.Len(t, got.Status.SubsetStatuses, 1)
	require.Len(t, got.Status.SubsetStatuses[0].CreatingPods, n, "every change is written")
	require.EqualValues(t, 2, writes.Load(), "the nine changes that queued behind the first write go out in one write")
}

// A change that fails or changes nothing leaves the object as it found it for the changes
// written with it, and only its own caller sees its error.
func TestAFailedChangeInAGroupIsNotWrittenAndFailsOnlyItsCaller(t *testing.T) {
	ctx := context.Background()
	ws := spreadWith()
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(ws).WithStatusSubresource(ws).Build()
	w := New[appsv1alpha1.WorkloadSpread](c, c, retry.DefaultRetry)
	boom := fmt.Errorf("boom")
	batch := []*pending[*appsv1alpha1.WorkloadSpread]{
		{change: record("kept")},
		{change: func(cur *appsv1alpha1.WorkloadSpread) (bool, error) {
			_, _ = record("refused")(cur)
			return true, boom
		}},
		{change: func(cur *appsv1alpha1.WorkloadSpread) (bool, error) {
			_, _ = record("unchanged")(cur)
			return false, nil
		}},
	}
	errs := w.write(ctx, ws, batch)
	require.NoError(t, errs[0])
	require.ErrorIs(t, errs[1], boom)
	require.NoError(t, errs[2])
	got := &appsv1alpha1.WorkloadSpread{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(ws), got))
	require.Len(t, got.Status.SubsetStatuses, 1)
	require.Contains(t, got.Status.SubsetStatuses[0].CreatingPods, "kept")
	require.Len(t, got.Status.SubsetStatuses[0].CreatingPods, 1, "only the change that succeeded is written")
}

// A manager runs for months while budgets and WorkloadSpreads come and go: the Writer must
// not keep a queue or a copy of each object it ever wrote.
func TestAWriterKeepsNoQueueOnceItsCallersAreDoneAndNoCopyOnceTheCacheCaughtUp(t *testing.T) {
	ctx := context.Background()
	ws := spreadWith()
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(ws).WithStatusSubresource(ws).Build()
	w := New[appsv1alpha1.WorkloadSpread](c, c, retry.DefaultRetry)
	require.NoError(t, w.Update(ctx, ws, record("pod-0")))
	queues, copies := w.held()
	require.Equal(t, 0, queues, "no caller waits, so no queue is kept")
	require.Equal(t, 1, copies, "the copy just written is kept for the reads before the cache shows it")

	got, err := w.Read(ctx, ws)
	require.NoError(t, err)
	require.Contains(t, got.Status.SubsetStatuses[0].CreatingPods, "pod-0")
	_, copies = w.held()
	require.Equal(t, 0, copies, "the cache shows the write, so the copy is dropped")
}

func TestCopiesOfObjectsNeverReadAgainAreDroppedOnceOlderThanAMinute(t *testing.T) {
	ctx := context.Background()
	var objs []client.Object
	for i := range sweepAbove + 1 {
		ws := spreadWith()
		ws.Name, ws.UID = fmt.Sprintf("ws-%d", i), types.UID(fmt.Sprintf("uid-%d", i))
		objs = append(objs, ws)
	}
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(objs...).WithStatusSubresource(objs...).Build()
	w := New[appsv1alpha1.WorkloadSpread](c, c, retry.DefaultRetry)
	now := time.Unix(1000, 0)
	w.now = func() time.Time { return now }
	for _, o := range objs[:sweepAbove] {
		require.NoError(t, w.Update(ctx, o.(*appsv1alpha1.WorkloadSpread), record("pod")))
	}
	_, copies := w.held()
	require.Equal(t, sweepAbove, copies)

	now = now.Add(keepLatest + time.Second)
	require.NoError(t, w.Update(ctx, objs[sweepAbove].(*appsv1alpha1.WorkloadSpread), record("pod")))
	_, copies = w.held()
	require.Equal(t, 1, copies, "only the copy written now is left")
}
