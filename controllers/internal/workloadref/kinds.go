package workloadref

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
	appsv1beta1 "github.com/kruise-addon/kruise-addon/apis/apps/v1beta1"
)

// The built-in workload kinds, by group and kind: a reference of any version of the group names
// the same workload.
var (
	CloneSet            = schema.GroupKind{Group: "apps.kruise.io", Kind: "CloneSet"}
	AdvancedStatefulSet = schema.GroupKind{Group: "apps.kruise.io", Kind: "StatefulSet"}
	Deployment          = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	ReplicaSet          = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	StatefulSet         = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	Job                 = schema.GroupKind{Group: "batch", Kind: "Job"}
)

// builtInKind is how a built-in kind is read: its typed object, and its desired replicas (a
// Job's parallelism) and selector; spec's ok is false for an object of another kind.
type builtInKind struct {
	newObject func() client.Object
	spec      func(client.Object) (replicas *int32, selector *metav1.LabelSelector, ok bool)
}

// kind makes the builtInKind of the typed object T from the accessor of its spec.
func kind[T any, PT interface {
	*T
	client.Object
}](spec func(PT) (*int32, *metav1.LabelSelector)) builtInKind {
	return builtInKind{
		newObject: func() client.Object { return PT(new(T)) },
		spec: func(o client.Object) (*int32, *metav1.LabelSelector, bool) {
			typed, ok := o.(PT)
			if !ok {
				return nil, nil, false
			}
			replicas, selector := spec(typed)
			return replicas, selector, true
		},
	}
}

// builtIn is the table of the built-in kinds.
var builtIn = map[schema.GroupKind]builtInKind{
	CloneSet: kind(func(o *appsv1alpha1.CloneSet) (*int32, *metav1.LabelSelector) {
		return o.Spec.Replicas, o.Spec.Selector
	}),
	AdvancedStatefulSet: kind(func(o *appsv1beta1.StatefulSet) (*int32, *metav1.LabelSelector) {
		return o.Spec.Replicas, o.Spec.Selector
	}),
	Deployment:  kind(func(o *appsv1.Deployment) (*int32, *metav1.LabelSelector) { return o.Spec.Replicas, o.Spec.Selector }),
	ReplicaSet:  kind(func(o *appsv1.ReplicaSet) (*int32, *metav1.LabelSelector) { return o.Spec.Replicas, o.Spec.Selector }),
	StatefulSet: kind(func(o *appsv1.StatefulSet) (*int32, *metav1.LabelSelector) { return o.Spec.Replicas, o.Spec.Selector }),
	Job:         kind(func(o *batchv1.Job) (*int32, *metav1.LabelSelector) { return o.Spec.Parallelism, o.Spec.Selector }),
}

// IsBuiltIn tells whether k is one of the built-in kinds.
func IsBuiltIn(k schema.GroupKind) bool {
	_, ok := builtIn[k]
	return ok
}

// Kinds is a set of kinds a caller accepts.
type Kinds map[schema.GroupKind]bool

// KindsOf makes the set of the kinds given.
func KindsOf(kinds ...schema.GroupKind) Kinds {
	s := Kinds{}
	for _, k := range kinds {
		s[k] = true
	}
	return s
}

// Ref names a workload in a namespace the caller knows: a targetRef or an owner reference.
type Ref struct {
	APIVersion, Kind, Name string
}

// KindOf parses a reference's apiVersion and kind into its group and kind.
func KindOf(apiVersion, kind string) (schema.GroupKind, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupKind{}, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	return schema.GroupKind{Group: gv.Group, Kind: kind}, nil
}

// GroupKind is the reference's group and kind; an apiVersion that does not parse is an error.
func (r Ref) GroupKind() (schema.GroupKind, error) { return KindOf(r.APIVersion, r.Kind) }

// Is tells whether r names a workload of one of kinds.
func (r Ref) Is(kinds Kinds) bool {
	k, err := r.GroupKind()
	return err == nil && kinds[k]
}

// Same tells whether two references name the same workload: same group, kind and name,
// whatever the version.
func Same(a, b Ref) bool {
	ka, errA := a.GroupKind()
	kb, errB := b.GroupKind()
	return errA == nil && errB == nil && ka == kb && a.Name == b.Name
}
