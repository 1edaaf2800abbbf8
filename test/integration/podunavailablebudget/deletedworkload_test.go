package podunavailablebudget

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
)

// TestPodsOfADeletedWorkloadAreNotProtected checks a budget counts no replica for pods whose
// CloneSet is gone or being deleted, so the deletions the garbage collector sends for them are
// let through: with maxUnavailable 0 and the workload in place, the same deletion is refused.
func TestPodsOfADeletedWorkloadAreNotProtected(t *testing.T) {
	for name, propagation := range map[string]metav1.DeletionPropagation{
		"the CloneSet is gone":          metav1.DeletePropagationBackground,
		"the CloneSet is being deleted": metav1.DeletePropagationForeground,
	} {
		t.Run(name, func(t *testing.T) {
			ns := framework.NewNamespace(t, env.Client, "pub-orphan-", nil)
			cs := kinds.CloneSet("web", ns).Replicas(1).Obj()
			framework.Create(t, env.Client, cs)
			waitCloneSetPods(t, ns, "web", 1)
			framework.Create(t, env.Client, budgetByLabel(ns, "web", "web", intstr.FromInt32(0), 0))
			waitStatus(t, ns, "web", statusNumbers{Total: 1, Desired: 1, Current: 1, Allowed: 0})
			pod := podNames(t, ns, "web")[0]
			ctx := context.Background()
			if err := deletePod(ctx, ns, pod, client.DryRunAll); err == nil {
				t.Fatalf("deleting %s while its CloneSet stands was let through; the budget has no room", pod)
			}

			if err := env.Client.Delete(ctx, cs, client.PropagationPolicy(propagation)); err != nil {
				t.Fatalf("delete the CloneSet: %v", err)
			}
			waitStatus(t, ns, "web", statusNumbers{Total: 0, Desired: 0, Current: 1, Allowed: 1})
			if err := deletePod(ctx, ns, pod); err != nil {
				t.Fatalf("delete %s, as the garbage collector does: %v", pod, err)
			}
		})
	}
}
