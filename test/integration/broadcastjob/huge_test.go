package broadcastjob

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// A BroadcastJob of parallelism 2147483647 compares it only with the nodes that exist: one pod
// per node the template fits, no more, with the heap bounded.
func TestHugeParallelismBroadcastJobKeepsTheManagersMemoryBounded(t *testing.T) {
	ns := newNamespace(t)
	heap := framework.BoundHeap(t, fmt.Sprintf("a BroadcastJob of parallelism %d ran", framework.HugeReplicas), 0)
	createJob(t, kinds.BroadcastJob("huge", ns).Parallelism(intstr.FromInt32(framework.HugeReplicas)).Never().Obj())
	onePerNode := func(ctx context.Context) error {
		heap.Check()
		pods, err := jobPods(ctx, ns, "huge")
		if err != nil {
			return err
		}
		return framework.Want(slices.Equal(plainNodeNames(), boundNodes(pods)), fmt.Sprintf("pods on nodes %v", boundNodes(pods)))
	}
	framework.Eventually(t, framework.Medium, "one pod on every node the template fits", onePerNode)
	framework.Consistently(t, hold, "no pod beyond one per node", onePerNode)
	heap.Log()
}

// An EphemeralJob of replicas and parallelism 2147483647 compares them only with the pods that
// exist: its container goes into every matching pod, with the heap bounded.
func TestHugeReplicasEphemeralJobKeepsTheManagersMemoryBounded(t *testing.T) {
	ns := newNamespace(t)
	targets := []string{"web-a", "web-b", "web-c"}
	for _, name := range targets {
		framework.Create(t, env.Client, builder.Pod(name, ns).Label("app", "web").Node(unservedNode).Obj())
	}
	heap := framework.BoundHeap(t, fmt.Sprintf("an EphemeralJob of replicas and parallelism %d ran", framework.HugeReplicas), 0)
	job := kinds.EphemeralJob("huge", ns, "web").Obj()
	job.Spec.Replicas, job.Spec.Parallelism = ptr.To[int32](framework.HugeReplicas), ptr.To[int32](framework.HugeReplicas)
	job.Spec.Template.EphemeralContainers[0].Name = "probe"
	framework.Create(t, env.Client, job)
	framework.Eventually(t, framework.Medium, "the container in every matching pod", func(ctx context.Context) error {
		heap.Check()
		got := &appsv1alpha1.EphemeralJob{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(job), got); err != nil {
			return err
		}
		with, err := withProbe(ctx, ns, string(got.UID))
		if err != nil {
			return err
		}
		slices.Sort(with)
		return framework.Want(slices.Equal(targets, with) && got.Status.Matches == int32(len(targets)),
			fmt.Sprintf("container in %v, status matches %d", with, got.Status.Matches))
	})
	heap.Log()
}
