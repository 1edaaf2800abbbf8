package persistentpodstate

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	"github.com/kruise-addon/kruise-addon/controllers/persistentpodstate/restore"
	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/framework/builder/kinds"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// statefulRun is a whitelisted StatefulSet-like custom workload "db" of two replicas with a
// PersistentPodState keeping its pods' zones, and its Ready pods db-0 and db-1, which the test
// creates as the workload's controller would.
type statefulRun struct {
	ns  string
	run *unstructured.Unstructured
	// create creates the workload's pod of that name.
	create func(name string)
}

// whitelistedKind installs kind of group, whitelists it under
// PPS_Watch_Custom_Workload_WhiteList and returns its apiVersion and a new namespace.
func whitelistedKind(t *testing.T, group, kind string) (apiVersion, ns string) {
	apiVersion = framework.CustomWorkloadKind(t, env.Client, group, kind)
	framework.CreateForTest(t, env.Client, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kruise-configuration", Namespace: harness.ManagerNamespace},
		Data: map[string]string{"PPS_Watch_Custom_Workload_WhiteList": fmt.Sprintf(
			`{"workloads":[{"Group":%q,"Version":"v1","Kind":%q}]}`, group, kind)},
	})
	return apiVersion, framework.NewNamespace(t, env.Client, "pps-custom-", nil)
}

// podOf is a pod name of ns that run controls.
func podOf(name, ns, apiVersion, kind string, run *unstructured.Unstructured) *corev1.Pod {
	return builder.Pod(name, ns).Label("app", run.GetName()).OwnedBy(builder.ControllerRef(apiVersion, kind, run)).Obj()
}

// newStatefulRun whitelists kind of group, creates the workload, its PersistentPodState and
// its pods, and waits until the states of db-0 and db-1 are recorded.
func newStatefulRun(t *testing.T, group, kind string) *statefulRun {
	apiVersion, ns := whitelistedKind(t, group, kind)
	s := &statefulRun{ns: ns}
	s.run = framework.CustomWorkload(apiVersion, kind, "db", s.ns, 2)
	framework.Create(t, env.Client, s.run)
	framework.Create(t, env.Client, kinds.PersistentPodState("db", s.ns, "db").Target(apiVersion, kind).Required(zoneKey).Obj())
	s.create = func(name string) { framework.Create(t, env.Client, podOf(name, s.ns, apiVersion, kind, s.run)) }
	s.create("db-0")
	s.create("db-1")
	readyPod(t, s.ns, "db-0", "")
	zone := zoneOfNode(readyPod(t, s.ns, "db-1", "").Spec.NodeName)
	statesAre(t, s.ns, "db", "db-0's and db-1's zones recorded", func(st map[string]appsv1alpha1.PodState) error {
		return framework.Want(len(st) == 2 && st["db-1"].NodeTopologyLabels[zoneKey] == zone, fmt.Sprintf("states %+v", st))
	})
	return s
}

// deletePod deletes the workload's pod name and waits until it is gone.
func (s *statefulRun) deletePod(t *testing.T, name string) *corev1.Pod {
	t.Helper()
	pod, err := getPod(t.Context(), s.ns, name)
	if err != nil {
		t.Fatal(err)
	}
	framework.Delete(t, env.Client, pod)
	framework.WaitGone(t, env.Client, client.ObjectKeyFromObject(pod), &corev1.Pod{}, framework.Medium, name+" gone")
	return pod
}

// TestAWhitelistedStatefulSetLikeWorkloadsPodsKeepTheirZone: a custom workload kind that the
// kruise-configuration ConfigMap's PPS_Watch_Custom_Workload_WhiteList names may be a
// PersistentPodState's target, as in 1.8: the states of its Ready pods are recorded, a pod it
// recreates under its name returns to its recorded zone, and the state of a pod it scaled away
// (spec.replicas) is dropped.
func TestAWhitelistedStatefulSetLikeWorkloadsPodsKeepTheirZone(t *testing.T) {
	s := newStatefulRun(t, "stateful.example.io", "StatefulRun")
	before := s.deletePod(t, "db-1")
	zone := zoneOfNode(before.Spec.NodeName)
	s.create("db-1")
	after := readyPod(t, s.ns, "db-1", before.UID)
	if got := after.Spec.NodeSelector[zoneKey]; got != zone {
		t.Errorf("recreated db-1 has nodeSelector %v, want %s=%s", after.Spec.NodeSelector, zoneKey, zone)
	}
	if got := after.Annotations[restore.InjectedAnnotation]; got != "db" {
		t.Errorf("recreated db-1 annotation %s=%q, want db", restore.InjectedAnnotation, got)
	}

	framework.MergePatch(t, env.Client, s.run, `{"spec":{"replicas":1}}`)
	framework.Delete(t, env.Client, after)
	statesAre(t, s.ns, "db", "the state of db-1, scaled away, dropped", func(st map[string]appsv1alpha1.PodState) error {
		_, kept := st["db-1"]
		return framework.Want(!kept && len(st) == 1, fmt.Sprintf("states %+v", st))
	})
}

// TestAScaleDownOfAWhitelistedCustomWorkloadDropsTheStateOfItsGonePod: the controller watches
// the custom kind of a target it found, as 1.8 watches the whitelisted kinds, so a scale-down
// after the pod is gone drops its state with no pod event left to bring it.
func TestAScaleDownOfAWhitelistedCustomWorkloadDropsTheStateOfItsGonePod(t *testing.T) {
	s := newStatefulRun(t, "scaled.example.io", "ScaledStatefulRun")
	s.deletePod(t, "db-1")
	statesAre(t, s.ns, "db", "db-1's state kept while db-1 is within the replicas", func(st map[string]appsv1alpha1.PodState) error {
		_, kept := st["db-1"]
		return framework.Want(kept, fmt.Sprintf("states %+v", st))
	})
	framework.MergePatch(t, env.Client, s.run, `{"spec":{"replicas":1}}`)
	statesAre(t, s.ns, "db", "the state of db-1, scaled away, dropped", func(st map[string]appsv1alpha1.PodState) error {
		_, kept := st["db-1"]
		return framework.Want(!kept && len(st) == 1, fmt.Sprintf("states %+v", st))
	})
}

// TestAWhitelistedCustomWorkloadsAnnotationsGenerateAPersistentPodState: the
// kruise.io/auto-generate-persistent-pod-state annotations of a whitelisted StatefulSet-like
// custom workload generate its PersistentPodState, as 1.8 does for the whitelisted kinds, and
// dropping them deletes it.
func TestAWhitelistedCustomWorkloadsAnnotationsGenerateAPersistentPodState(t *testing.T) {
	const kind = "GeneratedRun"
	apiVersion, ns := whitelistedKind(t, "generated.example.io", kind)
	run := framework.CustomWorkload(apiVersion, kind, "auto", ns, 1)
	run.SetAnnotations(map[string]string{
		appsv1alpha1.AnnotationAutoGeneratePersistentPodState: "true",
		appsv1alpha1.AnnotationRequiredPersistentTopology:     zoneKey,
	})
	framework.Create(t, env.Client, run)
	framework.Create(t, env.Client, podOf("auto-0", ns, apiVersion, kind, run))

	framework.WaitFor(t, env.Client, client.ObjectKey{Namespace: ns, Name: "auto"}, framework.Medium, "a PersistentPodState generated for the workload",
		func(pps *appsv1alpha1.PersistentPodState) error {
			ref, req := pps.Spec.TargetReference, pps.Spec.RequiredPersistentTopology
			return framework.Want(ref.APIVersion == apiVersion && ref.Kind == kind && ref.Name == "auto" &&
				req != nil && len(req.NodeTopologyKeys) == 1 && req.NodeTopologyKeys[0] == zoneKey, fmt.Sprintf("spec %+v", pps.Spec))
		})
	statesAre(t, ns, "auto", "the generated PersistentPodState records auto-0", func(st map[string]appsv1alpha1.PodState) error {
		return framework.Want(st["auto-0"].NodeTopologyLabels[zoneKey] != "", fmt.Sprintf("states %v", st))
	})

	framework.MergePatch(t, env.Client, run, `{"metadata":{"annotations":{"`+appsv1alpha1.AnnotationAutoGeneratePersistentPodState+`":null}}}`)
	framework.WaitGone(t, env.Client, client.ObjectKey{Namespace: ns, Name: "auto"}, &appsv1alpha1.PersistentPodState{}, framework.Medium, "the generated PersistentPodState deleted")
}
