package installer

import "k8s.io/apimachinery/pkg/runtime/schema"

// crdResource is the resource of CustomResourceDefinitions, which the upgrade applies and patches
// and the uninstall deletes, through the dynamic and metadata clients.
func crdResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
}
