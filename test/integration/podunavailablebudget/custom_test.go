package podunavailablebudget

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/kruise-addon/kruise-addon/apis/policy/v1alpha1"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
)

// TestTargetRefToACustomWorkloadReadsItsScaleSubresource: a budget whose targetRef names a
// custom workload that serves a scale sub-resource covers the pods the workload controls and
// takes its desired count from the scale's replicas; a pod the workload creates later names
// the budget too.
func TestTargetRefToACustomWorkloadReadsItsScaleSubresource(t *testing.T) {
	const kind = "GameServerSet"
	apiVersion := framework.CustomWorkloadKind(t, env.Client, "games.example.io", kind)
	ns := framework.NewNamespace(t, env.Client, "pub-custom-", nil)
	set := framework.CustomWorkload(apiVersion, kind, "game", ns, 2)
	framework.Create(t, env.Client, set)
	pod := func(name string) {
		framework.Create(t, env.Client, builder.Pod(name, ns).Label("app", "game").TerminationGracePeriod(0).
			OwnedBy(builder.ControllerRef(apiVersion, kind, set)).Obj())
	}
	pod("game-0")
	pod("game-1")
	framework.Create(t, env.Client, &policyv1alpha1.PodUnavailableBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "game", Namespace: ns},
		Spec: policyv1alpha1.PodUnavailableBudgetSpec{
			TargetReference: &policyv1alpha1.TargetReference{APIVersion: apiVersion, Kind: kind, Name: "game"},
			MaxUnavailable:  ptr.To(intstr.FromString("50%")),
		},
	})
	waitStatus(t, ns, "game", statusNumbers{Total: 2, Desired: 1, Current: 2, Allowed: 1})
	waitRelated(t, ns, "game", "game-0", "game-1")
	pod("game-2")
	waitRelated(t, ns, "game", "game-2")
}
