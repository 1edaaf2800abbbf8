package workloadref

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ScaleOf reads the workload ref names through its scale sub-resource, the way a workload of a
// kind that is not built in is read: its replicas are the scale's spec.replicas and its selector
// the scale's status.selector. It returns nil, and no error, when the kind is not served, the
// workload is absent or it serves no scale. The read goes to the apiserver.
func ScaleOf(ctx context.Context, c client.SubResourceClientConstructor, namespace string, ref Ref) (*Workload, error) {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(ref.APIVersion)
	obj.SetKind(ref.Kind)
	obj.SetName(ref.Name)
	obj.SetNamespace(namespace)
	scale := &unstructured.Unstructured{}
	scale.SetAPIVersion("autoscaling/v1")
	scale.SetKind("Scale")
	if err := c.SubResource("scale").Get(ctx, obj, scale); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) || apierrors.IsMethodNotSupported(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get the scale of %s %s: %w", ref.Kind, ref.Name, err)
	}
	replicas, _, _ := unstructured.NestedInt64(scale.Object, "spec", "replicas")
	w := &Workload{Ref: ref, Object: scale, UID: scale.GetUID(), Replicas: int32(replicas)}
	if s, _, _ := unstructured.NestedString(scale.Object, "status", "selector"); s != "" {
		sel, err := metav1.ParseToLabelSelector(s)
		if err != nil {
			return nil, fmt.Errorf("the scale of %s %s: status.selector %q: %w", ref.Kind, ref.Name, s, err)
		}
		w.Selector = sel
	}
	return w, nil
}
