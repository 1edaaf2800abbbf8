package crds

import (
	"context"
	"encoding/json"
	"fmt"

	"helm.sh/helm/v3/pkg/chart"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/yaml"

	"github.com/kruise-addon/kruise-addon/apis/kinds"
	"github.com/kruise-addon/kruise-addon/installer/facts"
)

// resource is the resource of CustomResourceDefinitions, which the upgrade applies and patches
// and the uninstall deletes, through the dynamic and metadata clients.
func resource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
}

// Managed reports whether the chart renders the CRDs (crds.managed, on unless turned off).
func Managed(vals map[string]any) bool {
	crds, _ := vals["crds"].(map[string]any)
	managed, ok := crds["managed"]
	return !ok || managed != false
}

// Adopt gives each named CRD of the add-on this release's Helm ownership metadata, so that
// Helm takes over those CRDs, and only those, instead of taking over every object the release
// renders. names come from preflight: our CRDs (apis/kinds) that exist without a live owner.
func Adopt(ctx context.Context, client metadata.Interface, owner facts.Owner, names []string) error {
	for _, name := range names {
		if !kinds.IsOurCRD(name) {
			return fmt.Errorf("adopt crd %s: not one of the add-on's CRDs", name)
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"labels": map[string]string{facts.LabelManagedBy: "Helm"},
			"annotations": map[string]string{
				facts.AnnotationReleaseName:      owner.Release,
				facts.AnnotationReleaseNamespace: owner.Namespace,
			},
		}})
		if err != nil {
			return fmt.Errorf("adopt crd %s: %w", name, err)
		}
		_, err = client.Resource(resource()).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: facts.FieldManager})
		switch {
		case apierrors.IsNotFound(err):
			// Gone since the facts were read (a deletion finishing): Helm creates it.
		case err != nil:
			return fmt.Errorf("adopt crd %s: %w", name, err)
		}
	}
	return nil
}

// Apply applies the add-on's CRDs (apis/kinds) from the chart server-side with the
// installer's field manager, so that a changed schema is served before the new manager starts;
// Helm alone never upgrades CRDs reliably. A listed CRD missing from the chart is an error, not
// a silent skip.
func Apply(ctx context.Context, client dynamic.Interface, ch *chart.Chart) error {
	files := map[string][]byte{}
	for _, f := range ch.Files {
		files[f.Name] = f.Data
	}
	for _, k := range kinds.All() {
		name := crdFile(k)
		data, ok := files[name]
		if !ok {
			return fmt.Errorf("apply crd %s: the chart has no %s", k.CRDName(), name)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &obj.Object); err != nil {
			return fmt.Errorf("parse %s: %w", name, err)
		}
		if obj.GetKind() != "CustomResourceDefinition" || obj.GetName() != k.CRDName() {
			return fmt.Errorf("apply crd %s: %s holds %s %s", k.CRDName(), name, obj.GetKind(), obj.GetName())
		}
		body, err := obj.MarshalJSON()
		if err != nil {
			return fmt.Errorf("encode %s: %w", name, err)
		}
		force := true
		if _, err := client.Resource(resource()).Patch(ctx, k.CRDName(), types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: facts.FieldManager, Force: &force}); err != nil {
			return fmt.Errorf("apply crd %s: %w", k.CRDName(), err)
		}
	}
	return nil
}

// crdFile is where `make manifests` puts a kind's CRD in the chart.
func crdFile(k kinds.Kind) string { return "files/crds/" + k.Group + "_" + k.Resource + ".yaml" }

// Delete deletes the add-on's CRDs (apis/kinds) that exist, and no other: CRDs of other
// products in the kruise API family, such as rollouts.kruise.io, are left alone with their
// objects.
func Delete(ctx context.Context, client metadata.Interface) ([]string, error) {
	var deleted []string
	for _, name := range kinds.CRDNames() {
		err := client.Resource(resource()).Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return deleted, fmt.Errorf("delete crd %s: %w", name, err)
		}
		deleted = append(deleted, name)
	}
	return deleted, nil
}
