package pubcheck

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
	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
)

// Many deletions of pods one budget covers, admitted at once, must take exactly the budget's
// unavailableAllowed and refuse the rest with 1.8's reason; and the deletions that queue while
// a status write is in flight are written together in the next write, not one write each.
func TestConcurrentDeletesUnderOneBudgetAdmitExactlyUnavailableAllowedInFewerWritesThanAdmissions(t *testing.T) {
	const n, allowed = 20, 5
	ctx := context.Background()
	pub := budget(n, allowed)
	pub.UID = "pub-uid"
	release := make(chan struct{})
	var writes atomic.Int32
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(pub).WithStatusSubresource(pub).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				if writes.Add(1) == 1 {
					<-release // the first write is in flight until the other deletions have queued
				}
				return c.SubResource(sub).Update(ctx, obj, opts...)
			},
		}).Build()
	checker := NewChecker(c, c, clock.RealClock{})

	type outcome struct {
		allowed bool
		reason  string
		err     error
	}
	outcomes := make(chan outcome, n)
	del := func(i int) {
		ok, reason, err := checker.Check(ctx, readyPod(fmt.Sprintf("pod-%d", i)).Obj(), policyv1alpha1.PubDeleteOperation, false)
		outcomes <- outcome{ok, reason, err}
	}
	go del(0)
	require.Eventually(t, func() bool { return writes.Load() == 1 }, 10*time.Second, time.Millisecond, "the first deletion's write never started")
	for i := 1; i < n; i++ {
		go del(i)
	}
	require.Eventually(t, func() bool { return checker.writer.Waiting(pub.UID) == n-1 }, 10*time.Second, time.Millisecond, "the other deletions never queued")
	close(release)

	admitted := 0
	for range n {
		o := <-outcomes
		require.NoError(t, o.err)
		if o.allowed {
			admitted++
			continue
		}
		require.Contains(t, o.reason, "pub unavailable allowed is negative")
	}
	require.Equal(t, allowed, admitted, "exactly unavailableAllowed deletions are admitted")
	require.Less(t, int(writes.Load()), admitted, "the deletions are written in fewer status writes than were admitted")

	got := &policyv1alpha1.PodUnavailableBudget{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(pub), got))
	require.EqualValues(t, 0, got.Status.UnavailableAllowed)
	require.Len(t, got.Status.DisruptedPods, allowed, "every admitted deletion is recorded")
}

// A dry run is decided on what the checks before it left, and takes nothing from those after it.
func TestADryRunInAGroupTakesNoRoom(t *testing.T) {
	ctx := context.Background()
	pub := budget(2, 1)
	pub.UID = "pub-uid"
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(pub).WithStatusSubresource(pub).Build()
	checker := NewChecker(c, c, clock.RealClock{})

	ok, _, err := checker.Check(ctx, readyPod("dry").Obj(), policyv1alpha1.PubDeleteOperation, true)
	require.NoError(t, err)
	require.True(t, ok, "a dry run with room is allowed")
	ok, _, err = checker.Check(ctx, readyPod("real").Obj(), policyv1alpha1.PubDeleteOperation, false)
	require.NoError(t, err)
	require.True(t, ok, "the dry run took no room from the deletion after it")
	ok, reason, err := checker.Check(ctx, readyPod("dry-after").Obj(), policyv1alpha1.PubDeleteOperation, true)
	require.NoError(t, err)
	require.False(t, ok, "a dry run after the room is gone is refused")
	require.Contains(t, reason, "pub unavailable allowed is negative")
}
