package placement

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kruise-addon/kruise-addon/apis"
	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/workloadspread/spread"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// A burst of pod admissions to one WorkloadSpread must not queue one status write per pod: the
// changes that arrive while a write is in flight go out together in the next one, and every pod
// is still recorded.
func TestChangesArrivingDuringAWriteGoOutTogetherInTheNextWrite(t *testing.T) {
	ctx := context.Background()
	ws := kinds.WorkloadSpread("ws", "ns").Target("apps.kruise.io/v1alpha1", "CloneSet", "web").ZoneSubset("a", "zone-a", "100").Obj()
	ws.UID = "ws-uid"
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
	r := NewRecorder(c, c, clock.RealClock{})
	record := func(pod string) changeFunc {
		return func(_ *appsv1alpha1.WorkloadSpread, statuses []appsv1alpha1.WorkloadSpreadSubsetStatus) (bool, error) {
			if spread.Recorded(statuses, pod) >= 0 {
				return false, nil
			}
			return spread.RecordCreate(statuses, 0, pod, r.now()), nil
		}
	}

	const n = 10
	errs := make(chan error, n)
	go func() { errs <- r.update(ctx, ws, record("pod-0")) }()
	require.Eventually(t, func() bool { return writes.Load() == 1 }, 10*time.Second, time.Millisecond, "the first write never started")
	for i := 1; i < n; i++ {
		go func() { errs <- r.update(ctx, ws, record(fmt.Sprintf("pod-%d", i))) }()
	}
	q := r.queue(ws.UID)
	require.Eventually(t, func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.waiting) == n-1
	}, 10*time.Second, time.Millisecond, "the other admissions never queued")
	close(release)
	for range n {
		require.NoError(t, <-errs)
	}

	got := &appsv1alpha1.WorkloadSpread{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(ws), got))
	require.Len(t, got.Status.SubsetStatuses, 1)
	require.Len(t, got.Status.SubsetStatuses[0].CreatingPods, n, "every admitted pod is recorded")
	require.EqualValues(t, 2, writes.Load(), "the nine changes that queued behind the first write go out in one write")
}

// A change that fails or changes nothing leaves the statuses as it found them for the changes
// written with it, and only its own caller sees its error.
func TestAFailedChangeInAGroupIsNotWrittenAndFailsOnlyItsCaller(t *testing.T) {
	ctx := context.Background()
	ws := kinds.WorkloadSpread("ws", "ns").Target("apps.kruise.io/v1alpha1", "CloneSet", "web").ZoneSubset("a", "zone-a", "100").Obj()
	ws.UID = "ws-uid"
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(ws).WithStatusSubresource(ws).Build()
	r := NewRecorder(c, c, clock.RealClock{})
	boom := fmt.Errorf("boom")
	batch := []*pendingChange{
		{change: func(_ *appsv1alpha1.WorkloadSpread, st []appsv1alpha1.WorkloadSpreadSubsetStatus) (bool, error) {
			return spread.RecordCreate(st, 0, "kept", r.now()), nil
		}},
		{change: func(_ *appsv1alpha1.WorkloadSpread, st []appsv1alpha1.WorkloadSpreadSubsetStatus) (bool, error) {
			spread.RecordCreate(st, 0, "refused", r.now())
			return true, boom
		}},
		{change: func(_ *appsv1alpha1.WorkloadSpread, st []appsv1alpha1.WorkloadSpreadSubsetStatus) (bool, error) {
			spread.RecordCreate(st, 0, "unchanged", r.now())
			return false, nil
		}},
	}
	errs := r.write(ctx, ws, batch)
	require.NoError(t, errs[0])
	require.ErrorIs(t, errs[1], boom)
	require.NoError(t, errs[2])
	got := &appsv1alpha1.WorkloadSpread{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(ws), got))
	require.Len(t, got.Status.SubsetStatuses, 1)
	require.Contains(t, got.Status.SubsetStatuses[0].CreatingPods, "kept")
	require.Len(t, got.Status.SubsetStatuses[0].CreatingPods, 1, "only the change that succeeded is written")
}
