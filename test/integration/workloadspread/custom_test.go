package workloadspread

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/kruise-addon/kruise-addon/test/framework"
	"github.com/kruise-addon/kruise-addon/test/framework/builder"
	"github.com/kruise-addon/kruise-addon/test/integration/harness"
)

// The custom workload kind of the whitelist test: a job-like workload whose pods it controls
// itself, its desired count at spec.replicas.
const (
	customGroup   = "runs.example.io"
	customKind    = "BatchRun"
	customVersion = customGroup + "/v1"
)

// TestPodsOfAWhitelistedCustomWorkloadAreSpreadByPercentage: a custom workload kind that the
// kruise-configuration ConfigMap's WorkloadSpread_Watch_Custom_Workload_WhiteList names, with
// its replicasPath, may be a WorkloadSpread's target; its pods are spread, percentages taken
// of the replicas at that path.
func TestPodsOfAWhitelistedCustomWorkloadAreSpreadByPercentage(t *testing.T) {
	installCustomWorkload(t)
	framework.CreateForTest(t, env.Client, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "kruise-configuration", Namespace: harness.ManagerNamespace},
		Data: map[string]string{"WorkloadSpread_Watch_Custom_Workload_WhiteList": fmt.Sprintf(
			`{"workloads":[{"Group":%q,"Version":"v1","Kind":%q,"replicasPath":"spec.replicas"}]}`, customGroup, customKind)},
	})
	ns := framework.NewNamespace(t, env.Client, "ws-custom-", nil)
	run := &unstructured.Unstructured{}
	run.SetAPIVersion(customVersion)
	run.SetKind(customKind)
	run.SetName("run")
	run.SetNamespace(ns)
	must(t, unstructured.SetNestedField(run.Object, int64(6), "spec", "replicas"))
	framework.Create(t, env.Client, run)
	framework.Create(t, env.Client, percentSpread(ns, customVersion, customKind, "run"))
	observed(t, ns, "run")
	for range 6 {
		pod := builder.Pod("run-", ns).GenerateName("run-").Label("app", "run").
			OwnedBy(builder.ControllerRef(customVersion, customKind, run)).Obj()
		framework.Create(t, env.Client, pod)
	}
	spreadIs(t, ns, "run", map[string]int{"a": 2, "b": 2, "c": 2})
	statusesAre(t, ns, "run", "a 2/0 0+0, b 2/0 0+0, c 2/-1 0+0")
}

// installCustomWorkload installs the BatchRun CRD for the test and waits until its objects
// can be created.
func installCustomWorkload(t *testing.T) {
	t.Helper()
	plural := "batchruns"
	framework.CreateForTest(t, env.Client, &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + customGroup},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: customGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: customKind, ListKind: customKind + "List", Singular: "batchrun"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	})
	framework.Eventually(t, framework.Medium, "the BatchRun kind is served", func(ctx context.Context) error {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(customVersion)
		list.SetKind(customKind + "List")
		return env.Client.List(ctx, list)
	})
}
