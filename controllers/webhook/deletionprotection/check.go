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

// refusal builds the message every refusal shares. It starts with the words clients and scripts
// written for OpenKruise 1.8 match ("forbidden by ResourcesProtectionDeletion for <label>=<value>",
// then 1.8's reason, e.g. "and replicas 2>0"), and goes on with the object and what to do.
func refusal(kind string, obj metav1.Object, why, fix string) error {
	msg := fmt.Sprintf("forbidden by ResourcesProtectionDeletion for %s=%s", Label, obj.GetLabels()[Label])
	if why != "" {
		msg += " " + why
	}
	return refusalWith(msg, kind, obj, fix)
}

// refusalWith is a refusal whose first words are msg.
func refusalWith(msg, kind string, obj metav1.Object, fix string) error {
	name := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return fmt.Errorf("%s; %s %s: %s", msg, kind, name, fix)
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
		return refusal(kind, obj, fmt.Sprintf("and replicas %d>0", *replicas), "scale it to 0 or remove the label first")
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
	pods, claims := &corev1.PodList{}, &corev1.PersistentVolumeClaimList{}
	for _, c := range []struct {
		what       string
		count      func() (int, error)
		found, fix string
	}{
		{"pods", func() (int, error) {
			return countIn(ctx, r, ns.Name, pods, &pods.Items, func(p *corev1.Pod) bool {
				return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
			})
		}, "and active pods %d>0", "delete its workloads or remove the label first"},
		{"pvc", func() (int, error) {
			return countIn(ctx, r, ns.Name, claims, &claims.Items, func(c *corev1.PersistentVolumeClaim) bool {
				return c.DeletionTimestamp == nil && c.Status.Phase == corev1.ClaimBound
			})
		}, "and \"Bound\" status pvc %d>0", "delete them or remove the label first"},
	} {
		n, err := c.count()
		if err != nil {
			return refusal("Namespace", ns, "for list "+c.what+" error: "+err.Error(), "try again")
		}
		if n > 0 {
			return refusal("Namespace", ns, fmt.Sprintf(c.found, n), c.fix)
		}
	}
	return nil
}

// countIn lists list (whose items are *items) in namespace ns through r and counts the items
// counts holds for.
func countIn[T any](ctx context.Context, r client.Reader, ns string, list client.ObjectList, items *[]T, counts func(*T) bool) (int, error) {
	if err := r.List(ctx, list, client.InNamespace(ns)); err != nil {
		return 0, err
	}
	n := 0
	for i := range *items {
		if counts(&(*items)[i]) {
			n++
		}
	}
	return n, nil
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
		return refusalWith("feature-gate DeletionProtectionForCRDCascadingGate is not enabled", "CustomResourceDefinition", crd,
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
		return refusal("CustomResourceDefinition", crd, "for list CRs error: "+err.Error(), "try again")
	}
	active := 0
	for i := range list.Items {
		if list.Items[i].GetDeletionTimestamp() == nil {
			active++
		}
	}
	if active > 0 {
		return refusal("CustomResourceDefinition", crd, fmt.Sprintf("and active CRs %d>0", active),
			"delete its custom resources or remove the label first")
	}
	return nil
}
