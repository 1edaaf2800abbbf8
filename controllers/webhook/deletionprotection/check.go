package deletionprotection

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// Label is the label that asks for protection, and its two values.
const (
	Label     = appsv1alpha1.DeletionProtectionKey
	Always    = appsv1alpha1.DeletionProtectionTypeAlways
	Cascading = appsv1alpha1.DeletionProtectionTypeCascading
)

// refusal builds the message every refusal shares: the label, the object, what holds it, and
// what to do.
func refusal(kind string, obj metav1.Object, why, fix string) error {
	name := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	v := obj.GetLabels()[Label]
	if why == "" {
		return fmt.Errorf("deletion of %s %s forbidden by label %s=%s; %s", kind, name, Label, v, fix)
	}
	return fmt.Errorf("deletion of %s %s forbidden by label %s=%s while %s; %s", kind, name, Label, v, why, fix)
}

const removeLabel = "remove the label first"

// protected reports whether obj is subject to a check at all: it carries the label and is not
// already being deleted.
func protected(obj metav1.Object) (string, bool) {
	if obj == nil || obj.GetDeletionTimestamp() != nil {
		return "", false
	}
	v := obj.GetLabels()[Label]
	return v, v == Always || v == Cascading
}

// Workload checks the deletion of a workload of kind whose spec.replicas is replicas; Cascading
// refuses while it is above 0 (a nil count, which admission defaulting never leaves, holds
// nothing).
func Workload(kind string, obj metav1.Object, replicas *int32) error {
	v, ok := protected(obj)
	if !ok {
		return nil
	}
	if v == Always {
		return refusal(kind, obj, "", removeLabel)
	}
	if replicas != nil && *replicas > 0 {
		return refusal(kind, obj, fmt.Sprintf("spec.replicas is %d", *replicas), "scale it to 0 or remove the label first")
	}
	return nil
}

// AlwaysOnly checks the deletion of a kind that knows only Always (Service, Ingress).
func AlwaysOnly(kind string, obj metav1.Object) error {
	if v, ok := protected(obj); ok && v == Always {
		return refusal(kind, obj, "", removeLabel)
	}
	return nil
}

// Namespace checks a Namespace's deletion; Cascading lists its pods and claims through r.
func Namespace(ctx context.Context, r client.Reader, ns *corev1.Namespace) error {
	v, ok := protected(ns)
	if !ok {
		return nil
	}
	if v == Always {
		return refusal("Namespace", ns, "", removeLabel)
	}
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(ns.Name)); err != nil {
		return refusal("Namespace", ns, "its pods cannot be listed ("+err.Error()+")", "try again")
	}
	active := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			active++
		}
	}
	if active > 0 {
		return refusal("Namespace", ns, fmt.Sprintf("it has %d active pods", active), "delete its workloads or remove the label first")
	}
	claims := &corev1.PersistentVolumeClaimList{}
	if err := r.List(ctx, claims, client.InNamespace(ns.Name)); err != nil {
		return refusal("Namespace", ns, "its persistent volume claims cannot be listed ("+err.Error()+")", "try again")
	}
	bound := 0
	for i := range claims.Items {
		c := &claims.Items[i]
		if c.DeletionTimestamp == nil && c.Status.Phase == corev1.ClaimBound {
			bound++
		}
	}
	if bound > 0 {
		return refusal("Namespace", ns, fmt.Sprintf("it has %d Bound persistent volume claims", bound), "delete them or remove the label first")
	}
	return nil
}

// CRD checks a CustomResourceDefinition's deletion. Cascading needs cascadingGate
// (DeletionProtectionForCRDCascadingGate); then it lists the custom resources of the storage
// version through r.
func CRD(ctx context.Context, r client.Reader, crd *apiextensionsv1.CustomResourceDefinition, cascadingGate bool) error {
	v, ok := protected(crd)
	if !ok {
		return nil
	}
	if v == Always {
		return refusal("CustomResourceDefinition", crd, "", removeLabel)
	}
	if !cascadingGate {
		return refusal("CustomResourceDefinition", crd, "the DeletionProtectionForCRDCascadingGate feature gate is off",
			"turn the gate on, or remove the label first")
	}
	version := ""
	for _, ver := range crd.Spec.Versions {
		if ver.Storage {
			version = ver.Name
		}
	}
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(crd.Spec.Group + "/" + version)
	list.SetKind(crd.Spec.Names.ListKind)
	if list.GetKind() == "" {
		list.SetKind(crd.Spec.Names.Kind + "List")
	}
	if err := r.List(ctx, list); err != nil {
		return refusal("CustomResourceDefinition", crd, "its custom resources cannot be listed ("+err.Error()+")", "try again")
	}
	active := 0
	for i := range list.Items {
		if list.Items[i].GetDeletionTimestamp() == nil {
			active++
		}
	}
	if active > 0 {
		return refusal("CustomResourceDefinition", crd, fmt.Sprintf("%d %s still exist", active, crd.Spec.Names.Plural),
			"delete them or remove the label first")
	}
	return nil
}
