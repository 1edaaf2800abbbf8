package statefulset

import (
	"fmt"
	"testing"

	"github.com/kruise-addon/kruise-addon/controllers/statefulset"
	"github.com/kruise-addon/kruise-addon/test/framework"
)

// An Advanced StatefulSet of 2147483647 replicas once took the manager from 79 MB to 3.3 GB in
// 4 s with no pod created: the ordinals and the plan held one entry per replica. Now it creates
// its first pods with the heap bounded, and scaled to 0 it stops within the batch under way.
func TestHugeReplicasAdvancedStatefulSetKeepsTheManagersMemoryBounded(t *testing.T) {
	ns := newNamespace(t)
	env.RunHugeScale(t, framework.HugeScale{
		Namespace: ns,
		What:      fmt.Sprintf("a %d-replica Advanced StatefulSet", framework.HugeReplicas),
		AfterStop: statefulset.CreateBatchLimit,
		Create: func(t *testing.T) {
			framework.Create(t, env.Client, newSet("huge", ns, framework.HugeReplicas, parallel))
		},
		Stop: func(t *testing.T) {
			change(t, ns, "huge", replicas(0))
		},
	})
}
