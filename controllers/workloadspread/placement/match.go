package placement

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
)

// target is a group and kind a WorkloadSpread may point at or a pod may be owned by.
type target struct{ group, kind string }

var (
	cloneSet      = target{"apps.kruise.io", "CloneSet"}
	kruiseSts     = target{"apps.kruise.io", "StatefulSet"}
	deployment    = target{"apps", "Deployment"}
	replicaSet    = target{"apps", "ReplicaSet"}
	nativeSts     = target{"apps", "StatefulSet"}
	job           = target{"batch", "Job"}
	knownOwners   = map[target]bool{cloneSet: true, kruiseSts: true, deployment: true, replicaSet: true, nativeSts: true, job: true}
	statefulKinds = map[target]bool{kruiseSts: true, nativeSts: true}
)

func targetOf(apiVersion, kind string) (target, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return target{}, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	return target{gv.Group, kind}, nil
}

// IsStateful tells whether ws points at a StatefulSet, whose pods take subsets by ordinal.
func IsStateful(ws *appsv1alpha1.WorkloadSpread) bool {
	if ws.Spec.TargetReference == nil {
		return false
	}
	t, err := targetOf(ws.Spec.TargetReference.APIVersion, ws.Spec.TargetReference.Kind)
	return err == nil && statefulKinds[t]
}

// Finder finds the WorkloadSpread of a pod and the replicas of its target.
type Finder struct {
	// Client reads from the cache.
	Client client.Reader
	// Live, when set, reads a pod's ReplicaSet the cache has not seen yet: a ReplicaSet
	// creates its first pods at once, often before the manager's cache has it.
	Live client.Reader
}

// ForPod returns the WorkloadSpread of the pod's namespace whose targetRef is the pod's
// controller or, for a ReplicaSet, the Deployment owning it, and whose targetFilter selects the
// pod; nil when there is none. Pods of other owners are never looked at.
func (f Finder) ForPod(ctx context.Context, pod *corev1.Pod) (*appsv1alpha1.WorkloadSpread, error) {
	if _, ok := ownerOf(pod); !ok {
		return nil, nil
	}
	list := &appsv1alpha1.WorkloadSpreadList{}
	if err := f.Client.List(ctx, list, client.InNamespace(pod.Namespace)); err != nil {
		return nil, fmt.Errorf("list workloadspreads: %w", err)
	}
	for i := range list.Items {
		ws := &list.Items[i]
		if ws.DeletionTimestamp != nil {
			continue
		}
		ok, err := f.Targets(ctx, ws, pod)
		if err != nil {
			return nil, err
		}
		if ok {
			return ws, nil
		}
	}
	return nil, nil
}

// ownerOf returns the pod's controller when it is of a kind a WorkloadSpread may spread.
func ownerOf(pod *corev1.Pod) (*metav1.OwnerReference, bool) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return nil, false
	}
	owner, err := targetOf(ref.APIVersion, ref.Kind)
	return ref, err == nil && knownOwners[owner]
}

// Targets tells whether ws spreads pod: its targetRef is the pod's controller, or the
// Deployment owning the pod's ReplicaSet, and its targetFilter selects the pod.
func (f Finder) Targets(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, pod *corev1.Pod) (bool, error) {
	tr := ws.Spec.TargetReference
	ref, ok := ownerOf(pod)
	if tr == nil || !ok {
		return false, nil
	}
	want, err := targetOf(tr.APIVersion, tr.Kind)
	if err != nil {
		return false, nil
	}
	owner, _ := targetOf(ref.APIVersion, ref.Kind)
	matched := want == owner && tr.Name == ref.Name
	if !matched && want == deployment && owner == replicaSet {
		dep, err := f.controllerOf(ctx, &appsv1.ReplicaSet{}, pod.Namespace, ref.Name)
		if err != nil {
			return false, err
		}
		if dep != nil {
			got, err := targetOf(dep.APIVersion, dep.Kind)
			matched = err == nil && got == deployment && dep.Name == tr.Name
		}
	}
	if !matched {
		return false, nil
	}
	selected, err := selects(ws.Spec.TargetFilter, pod)
	return err == nil && selected, nil
}

func (f Finder) controllerOf(ctx context.Context, obj client.Object, ns, name string) (*metav1.OwnerReference, error) {
	found, err := getEither(ctx, obj, types.NamespacedName{Namespace: ns, Name: name}, f.Client, f.Live)
	if err != nil || !found {
		return nil, err
	}
	return metav1.GetControllerOf(obj), nil
}

// getEither reads key into obj from the first reader that has it; a nil reader is skipped.
// found is false when none has it.
func getEither(ctx context.Context, obj client.Object, key types.NamespacedName, readers ...client.Reader) (found bool, err error) {
	for _, r := range readers {
		if r == nil {
			continue
		}
		err := r.Get(ctx, key, obj)
		if err == nil {
			return true, nil
		}
		if !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("get %T %s: %w", obj, key.Name, err)
		}
	}
	return false, nil
}

func selects(filter *appsv1alpha1.TargetFilter, pod *corev1.Pod) (bool, error) {
	if filter == nil || filter.Selector == nil {
		return true, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(filter.Selector)
	if err != nil {
		return false, fmt.Errorf("targetFilter.selector: %w", err)
	}
	return sel.Matches(labels.Set(pod.Labels)), nil
}

// TargetReplicas returns the replicas of ws's target: spec.replicas, a Job's parallelism, or
// the sum of targetFilter.replicasPathList when that is set. The target is read from the
// first of readers that has it; found is false when none has, or when ws names no target of a
// kind it may spread.
func TargetReplicas(ctx context.Context, ws *appsv1alpha1.WorkloadSpread, readers ...client.Reader) (replicas int32, found bool, err error) {
	tr := ws.Spec.TargetReference
	if tr == nil {
		return 0, false, nil
	}
	t, err := targetOf(tr.APIVersion, tr.Kind)
	if err != nil {
		return 0, false, err
	}
	newObj, ok := targetObjects[t]
	if !ok {
		return 0, false, nil
	}
	obj := newObj()
	if found, err := getEither(ctx, obj, types.NamespacedName{Namespace: ws.Namespace, Name: tr.Name}, readers...); err != nil || !found {
		return 0, false, err
	}
	if ws.Spec.TargetFilter != nil && len(ws.Spec.TargetFilter.ReplicasPathList) > 0 {
		replicas, err := replicasAt(obj, ws.Spec.TargetFilter.ReplicasPathList)
		return replicas, err == nil, err
	}
	path := "spec.replicas"
	if t == job {
		path = "spec.parallelism"
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return 0, false, fmt.Errorf("convert target: %w", err)
	}
	v, ok, err := unstructured.NestedInt64(m, strings.Split(path, ".")...)
	if err != nil || !ok {
		return 1, true, nil // the API default of both fields
	}
	return int32(v), true, nil
}

// targetObjects makes the typed object of each target kind, read through the cache.
var targetObjects = map[target]func() client.Object{
	cloneSet:   func() client.Object { return &appsv1alpha1.CloneSet{} },
	kruiseSts:  func() client.Object { return &appsv1beta1.StatefulSet{} },
	deployment: func() client.Object { return &appsv1.Deployment{} },
	replicaSet: func() client.Object { return &appsv1.ReplicaSet{} },
	nativeSts:  func() client.Object { return &appsv1.StatefulSet{} },
	job:        func() client.Object { return &batchv1.Job{} },
}

// replicasAt sums the integers at the dotted paths of obj.
func replicasAt(obj client.Object, paths []string) (int32, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return 0, fmt.Errorf("convert target: %w", err)
	}
	var sum int64
	for _, p := range paths {
		v, found, err := unstructured.NestedInt64(m, strings.Split(p, ".")...)
		if err != nil {
			return 0, fmt.Errorf("targetFilter.replicasPathList %q: %w", p, err)
		}
		if found {
			sum += v
		}
	}
	return int32(sum), nil
}
