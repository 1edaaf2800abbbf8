package workloadspread

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// spreadCustomRun installs kind of group, whitelists it under
// WorkloadSpread_Watch_Custom_Workload_WhiteList with its replicasPath, and spreads the six pods
// of its workload "run" (which the test creates as the workload's controller would) by
// percentSpread, two in each subset. It returns the workload.
func spreadCustomRun(t *testing.T, group, kind string) (ns string, run *unstructured.Unstructured) {
	apiVersion := framework.CustomWorkloadKind(t, env.Client, group, kind)
	framework.CreateForTest(t, env.Client, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kruise-configuration", Namespace: harness.ManagerNamespace},
		Data: map[string]string{"WorkloadSpread_Watch_Custom_Workload_WhiteList": fmt.Sprintf(
			`{"workloads":[{"Group":%q,"Version":"v1","Kind":%q,"replicasPath":"spec.replicas"}]}`, group, kind)},
	})
	ns = framework.NewNamespace(t, env.Client, "ws-custom-", nil)
	run = framework.CustomWorkload(apiVersion, kind, "run", ns, 6)
	framework.Create(t, env.Client, run)
	framework.Create(t, env.Client, percentSpread(ns, apiVersion, kind, "run"))
	observed(t, ns, "run")
	for range 6 {
		pod := builder.Pod("run-", ns).GenerateName("run-").Label("app", "run").
			OwnedBy(builder.ControllerRef(apiVersion, kind, run)).Obj()
		framework.Create(t, env.Client, pod)
	}
	spreadIs(t, ns, "run", map[string]int{"a": 2, "b": 2, "c": 2})
	return ns, run
}

// TestPodsOfAWhitelistedCustomWorkloadAreSpreadByPercentage: a custom workload kind that the
// kruise-configuration ConfigMap's WorkloadSpread_Watch_Custom_Workload_WhiteList names, with
// its replicasPath, may be a WorkloadSpread's target; its pods are spread, percentages taken
// of the replicas at that path.
func TestPodsOfAWhitelistedCustomWorkloadAreSpreadByPercentage(t *testing.T) {
	ns, _ := spreadCustomRun(t, "runs.example.io", "BatchRun")
	statusesAre(t, ns, "run", "a 2/0 0+0, b 2/0 0+0, c 2/-1 0+0")
}

// TestAChangeOfAWhitelistedCustomTargetsReplicasReachesTheStatus: the controller watches the
// custom workload kind of a target it found, so a change of the target's replicas resizes the
// percentage subsets in the status with no pod event, as 1.8's watch of the whitelisted kinds
// does: 20% and 30% of 10 leave subset b one pod short.
func TestAChangeOfAWhitelistedCustomTargetsReplicasReachesTheStatus(t *testing.T) {
	ns, run := spreadCustomRun(t, "scaled.example.io", "ScaledRun")
	statusesAre(t, ns, "run", "a 2/0 0+0, b 2/0 0+0, c 2/-1 0+0")
	framework.MergePatch(t, env.Client, run, `{"spec":{"replicas":10}}`)
	statusesAre(t, ns, "run", "a 2/0 0+0, b 2/1 0+0, c 2/-1 0+0")
}
