package workloadref

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Workload is what the callers need of a workload.
type Workload struct {
	Ref
	// Object is the workload as read: typed for a built-in kind, unstructured for a custom one.
	Object client.Object
	UID    types.UID
	// Replicas is the desired scale: spec.replicas, a Job's spec.parallelism (1, the API default,
	// when unset), or a custom workload's replicasPath (0 without one).
	Replicas int32
	// Selector is spec.selector of a built-in kind; nil for a custom one.
	Selector *metav1.LabelSelector
	// Controller is the workload's own controller, nil when it has none.
	Controller *metav1.OwnerReference
}

// Deleting tells whether the workload is being deleted.
func (w *Workload) Deleting() bool { return w.Object.GetDeletionTimestamp() != nil }

// Finder reads workloads by reference.
type Finder struct {
	// Readers are tried in order and the first that has the workload answers; nil ones are
	// skipped.
	Readers []client.Reader
	// Custom returns the custom workloads the finder reads besides the built-in kinds; it is
	// called only for a kind that is not built in. Nil reads built-in kinds only.
	Custom func(ctx context.Context) (*Whitelist, error)
}

// Get reads the workload ref names in namespace. It returns nil, and no error, when no reader
// has it or its kind is neither built in nor whitelisted; an apiVersion that does not parse is
// an error.
func (f Finder) Get(ctx context.Context, namespace string, ref Ref) (*Workload, error) {
	k, err := ref.GroupKind()
	if err != nil {
		return nil, err
	}
	var obj client.Object
	var custom *CustomWorkload
	bk, isBuiltIn := builtIn[k]
	if isBuiltIn {
		obj = bk.newObject()
	} else if f.Custom != nil {
		wl, err := f.Custom(ctx)
		if err != nil {
			return nil, err
		}
		if custom = wl.Lookup(k); custom == nil {
			return nil, nil
		}
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(ref.APIVersion)
		u.SetKind(ref.Kind)
		obj = u
	} else {
		return nil, nil
	}
	if found, err := getFirst(ctx, obj, types.NamespacedName{Namespace: namespace, Name: ref.Name}, f.Readers); err != nil || !found {
		if err != nil {
			return nil, fmt.Errorf("get %s %s: %w", ref.Kind, ref.Name, err)
		}
		return nil, nil
	}
	w := &Workload{Ref: ref, Object: obj, UID: obj.GetUID(), Controller: metav1.GetControllerOf(obj)}
	if custom != nil {
		if w.Replicas, err = ReplicasAt(obj, custom.ReplicasPath); err != nil {
			return nil, err
		}
		return w, nil
	}
	replicas, selector, _ := bk.spec(obj)
	w.Selector, w.Replicas = selector, 1
	if replicas != nil {
		w.Replicas = *replicas
	}
	return w, nil
}

// ControllerOf reads the workload controlling a pod (or any object) whose controller is
// owner; for a ReplicaSet that a Deployment controls, the Deployment. It returns nil when
// owner is nil or names no workload a reader has.
func (f Finder) ControllerOf(ctx context.Context, namespace string, owner *metav1.OwnerReference) (*Workload, error) {
	if owner == nil {
		return nil, nil
	}
	w, err := f.Get(ctx, namespace, Ref{owner.APIVersion, owner.Kind, owner.Name})
	if err != nil || w == nil {
		return nil, err
	}
	if k, _ := w.GroupKind(); k != ReplicaSet || w.Controller == nil || !(Ref{w.Controller.APIVersion, w.Controller.Kind, ""}).Is(KindsOf(Deployment)) {
		return w, nil
	}
	dep, err := f.Get(ctx, namespace, Ref{w.Controller.APIVersion, w.Controller.Kind, w.Controller.Name})
	if err != nil {
		return nil, err
	}
	if dep != nil && dep.UID == w.Controller.UID {
		return dep, nil
	}
	return w, nil
}

// Controls tells whether the workload target controls an object whose controller is owner:
// owner names it, or owner names a workload of one of the kinds via whose own controller does,
// climbing at most maxDepth owners (a Deployment's pod through its ReplicaSet, a custom
// workload's pod through the kinds it creates).
func (f Finder) Controls(ctx context.Context, namespace string, target Ref, owner *metav1.OwnerReference, via Kinds) (bool, error) {
	found := false
	err := f.climb(ctx, namespace, owner, via, func(ref Ref) bool {
		found = Same(target, ref)
		return !found
	})
	if found {
		return true, nil
	}
	return false, err
}

// Chain returns every workload Controls would compare with a target, from owner up: for a
// caller that asks about many targets for one object, so the workloads are read once. err is
// the read that ended the climb; a target none of the refs is gets it from Controls.
func (f Finder) Chain(ctx context.Context, namespace string, owner *metav1.OwnerReference, via Kinds) ([]Ref, error) {
	var refs []Ref
	err := f.climb(ctx, namespace, owner, via, func(ref Ref) bool {
		refs = append(refs, ref)
		return true
	})
	return refs, err
}

// climb visits owner and, while the one visited names a workload of the kinds via, that
// workload's own controller, at most maxDepth of them, until visit returns false. It returns the
// read that ended the climb.
func (f Finder) climb(ctx context.Context, namespace string, owner *metav1.OwnerReference, via Kinds, visit func(Ref) bool) error {
	for depth := 0; owner != nil && depth < maxDepth; depth++ {
		ref := Ref{owner.APIVersion, owner.Kind, owner.Name}
		if !visit(ref) || !ref.Is(via) {
			return nil
		}
		w, err := f.Get(ctx, namespace, ref)
		if err != nil || w == nil {
			return err
		}
		owner = w.Controller
	}
	return nil
}

// maxDepth bounds the owner chain Controls climbs, so that an ownership loop ends.
const maxDepth = 4

// getFirst reads key into obj from the first reader that has it; found is false when none has.
func getFirst(ctx context.Context, obj client.Object, key types.NamespacedName, readers []client.Reader) (found bool, err error) {
	for _, r := range readers {
		if r == nil {
			continue
		}
		err := r.Get(ctx, key, obj)
		if err == nil {
			return true, nil
		}
		if !apierrors.IsNotFound(err) {
			return false, err
		}
	}
	return false, nil
}

// SpecReplicas returns spec.replicas of a built-in kind, or a Job's spec.parallelism; ok is
// false when it is unset or obj is of another kind.
func SpecReplicas(obj client.Object) (replicas int32, ok bool) {
	for _, bk := range builtIn {
		if p, _, ok := bk.spec(obj); ok {
			return ptr.Deref(p, 0), p != nil
		}
	}
	return 0, false
}

// ReplicasAt sums the integers at the dotted paths of obj (spec.replicas, say); a path obj
// does not hold counts 0, an empty one is skipped, and a path to a value that is not an
// integer is an error naming it.
func ReplicasAt(obj client.Object, paths ...string) (int32, error) {
	m, ok := obj.(runtime.Unstructured)
	var content map[string]interface{}
	if ok {
		content = m.UnstructuredContent()
	} else {
		var err error
		if content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return 0, fmt.Errorf("convert %s: %w", obj.GetName(), err)
		}
	}
	var sum int64
	for _, p := range paths {
		if p == "" {
			continue
		}
		v, found, err := unstructured.NestedInt64(content, strings.Split(p, ".")...)
		if err != nil {
			return 0, fmt.Errorf("replicas path %q: %w", p, err)
		}
		if found {
			sum += v
		}
	}
	return int32(sum), nil
}
