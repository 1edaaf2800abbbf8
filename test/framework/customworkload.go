package framework

import (
	"context"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CustomWorkloadKind installs, for the test, a namespaced custom workload kind of group and kind
// served at v1, with a scale sub-resource over spec.replicas, status.replicas and
// status.selector, and waits until its objects can be listed. It returns the kind's apiVersion.
func CustomWorkloadKind(t *testing.T, c client.Client, group, kind string) string {
	t.Helper()
	plural := strings.ToLower(kind) + "s"
	CreateForTest(t, c, &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind, ListKind: kind + "List", Singular: strings.ToLower(kind)},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{
					Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
					Scale: &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas",
						StatusReplicasPath: ".status.replicas", LabelSelectorPath: ptr.To(".status.selector")}},
			}},
		},
	})
	apiVersion := group + "/v1"
	Eventually(t, Medium, "the "+kind+" kind is served", func(ctx context.Context) error {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(apiVersion)
		list.SetKind(kind + "List")
		return c.List(ctx, list)
	})
	return apiVersion
}

// CustomWorkload is an object of a kind CustomWorkloadKind installed, with spec.replicas.
func CustomWorkload(apiVersion, kind, name, namespace string, replicas int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]interface{}{"spec": map[string]interface{}{"replicas": replicas}}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	u.SetNamespace(namespace)
	return u
}
