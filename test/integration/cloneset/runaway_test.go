package cloneset

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/cloneset"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// hugeScale is the huge-replicas scenario of a CloneSet named huge in ns, stopped by stop: it
// creates its first pods a batch at a time with the heap bounded, and once stopped at most the
// batch under way follows.
func hugeScale(ns string, stop func(t *testing.T)) framework.HugeScale {
	return framework.HugeScale{
		Namespace: ns,
		What:      fmt.Sprintf("a %d-replica CloneSet", framework.HugeReplicas),
		AfterStop: cloneset.CreateBatchLimit,
		Create: func(t *testing.T) {
			create(t, kinds.CloneSet("huge", ns).Replicas(framework.HugeReplicas).Obj())
		},
		Stop: stop,
	}
}

func TestHugeReplicasCloneSetKeepsTheManagersMemoryBounded(t *testing.T) {
	ns := newNamespace(t)
	env.RunHugeScale(t, hugeScale(ns, func(t *testing.T) {
		change(t, ns, "huge", func(cs *appsv1alpha1.CloneSet) { cs.Spec.Replicas = ptr.To[int32](0) })
	}))
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
	env.RunHugeScale(t, hugeScale(ns, func(t *testing.T) {
		if err := env.Client.Delete(context.Background(), getCloneSet(t, ns, "huge")); err != nil {
			t.Fatal(err)
		}
	}))
}
