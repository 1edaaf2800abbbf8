package daemonset

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// An Advanced DaemonSet whose counts (burstReplicas, partition, maxUnavailable) are 2147483647
// compares them only with the nodes that exist: one pod per node with the heap bounded, and
// deleted, it creates no more.
func TestHugeCountsAdvancedDaemonSetKeepsTheManagersMemoryBounded(t *testing.T) {
	ns := newNamespace(t)
	huge := intstr.FromInt32(framework.HugeReplicas)
	ds := kinds.DaemonSet("huge", ns).Image(imageV1).BurstReplicas(huge).Partition(framework.HugeReplicas).MaxUnavailable(huge).Obj()
	env.RunHugeScale(t, framework.HugeScale{
		Namespace: ns,
		What:      fmt.Sprintf("an Advanced DaemonSet with burstReplicas, partition and maxUnavailable %d", framework.HugeReplicas),
		Pods:      baseNodes,
		Create:    func(t *testing.T) { framework.Create(t, env.Client, ds) },
		Stop: func(t *testing.T) {
			if err := env.Client.Delete(context.Background(), ds, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
				t.Fatal(err)
			}
		},
	})
}
