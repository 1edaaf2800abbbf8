package persistentpodstate

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/persistentpodstate/restore"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// TestAWhitelistedStatefulSetLikeWorkloadsPodsKeepTheirZone: a custom workload kind that the
// kruise-configuration ConfigMap's PPS_Watch_Custom_Workload_WhiteList names may be a
// PersistentPodState's target, as in 1.8: the states of its Ready pods are recorded, a pod it
// recreates under its name returns to its recorded zone, and the state of a pod it scaled away
// (spec.replicas) is dropped.
func TestAWhitelistedStatefulSetLikeWorkloadsPodsKeepTheirZone(t *testing.T) {
	const group, kind = "stateful.example.io", "StatefulRun"
	apiVersion := framework.CustomWorkloadKind(t, env.Client, group, kind)
	framework.CreateForTest(t, env.Client, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kruise-configuration", Namespace: harness.ManagerNamespace},
		Data: map[string]string{"PPS_Watch_Custom_Workload_WhiteList": fmt.Sprintf(
			`{"workloads":[{"Group":%q,"Version":"v1","Kind":%q}]}`, group, kind)},
	})
	ns := framework.NewNamespace(t, env.Client, "pps-custom-", nil)
	run := framework.CustomWorkload(apiVersion, kind, "db", ns, 2)
	framework.Create(t, env.Client, run)
	framework.Create(t, env.Client, kinds.PersistentPodState("db", ns, "db").Target(apiVersion, kind).Required(zoneKey).Obj())
	// The test plays the workload's controller: it creates the pods under their ordinal names.
	createPod := func(name string) {
		framework.Create(t, env.Client, builder.Pod(name, ns).Label("app", "db").
			OwnedBy(builder.ControllerRef(apiVersion, kind, run)).Obj())
	}
	createPod("db-0")
	createPod("db-1")
	before := readyPod(t, ns, "db-1", "")
	readyPod(t, ns, "db-0", "")
	zone := zoneOfNode(before.Spec.NodeName)
	statesAre(t, ns, "db", "db-0's and db-1's zones recorded", func(s map[string]appsv1alpha1.PodState) error {
		return framework.Want(len(s) == 2 && s["db-1"].NodeTopologyLabels[zoneKey] == zone, fmt.Sprintf("states %+v", s))
	})

	framework.Delete(t, env.Client, before)
	framework.WaitGone(t, env.Client, client.ObjectKeyFromObject(before), &corev1.Pod{}, framework.Medium, "the old db-1 gone")
	createPod("db-1")
	after := readyPod(t, ns, "db-1", before.UID)
	if got := after.Spec.NodeSelector[zoneKey]; got != zone {
		t.Errorf("recreated db-1 has nodeSelector %v, want %s=%s", after.Spec.NodeSelector, zoneKey, zone)
	}
	if got := after.Annotations[restore.InjectedAnnotation]; got != "db" {
		t.Errorf("recreated db-1 annotation %s=%q, want db", restore.InjectedAnnotation, got)
	}

	framework.MergePatch(t, env.Client, run, `{"spec":{"replicas":1}}`)
	framework.Delete(t, env.Client, after)
	statesAre(t, ns, "db", "the state of db-1, scaled away, dropped", func(s map[string]appsv1alpha1.PodState) error {
		_, kept := s["db-1"]
		return framework.Want(!kept && len(s) == 1, fmt.Sprintf("states %+v", s))
	})
}
