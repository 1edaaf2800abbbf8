package kinds

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	appsv1alpha1 "github.com/kruise-addon/kruise-addon/apis/apps/v1alpha1"
)

// ResourceDistributionBuilder builds a ResourceDistribution.
type ResourceDistributionBuilder struct {
	obj *appsv1alpha1.ResourceDistribution
}

// ResourceDistribution starts a ResourceDistribution with no resource and no targets.
func ResourceDistribution(name string) *ResourceDistributionBuilder {
	return &ResourceDistributionBuilder{obj: &appsv1alpha1.ResourceDistribution{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "ResourceDistribution"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}}
}

// ConfigMap sets the resource to a v1 ConfigMap named name holding data.
func (b *ResourceDistributionBuilder) ConfigMap(name string, data map[string]string) *ResourceDistributionBuilder {
	return b.Resource(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "data": data})
}

// Secret sets the resource to a v1 Opaque Secret named name holding stringData.
func (b *ResourceDistributionBuilder) Secret(name string, stringData map[string]string) *ResourceDistributionBuilder {
	return b.Resource(map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": map[string]any{"name": name}, "stringData": stringData})
}

// Resource sets the resource to obj, as JSON.
func (b *ResourceDistributionBuilder) Resource(obj map[string]any) *ResourceDistributionBuilder {
	raw, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	b.obj.Spec.Resource = runtime.RawExtension{Raw: raw}
	return b
}

// AllNamespaces selects every namespace.
func (b *ResourceDistributionBuilder) AllNamespaces() *ResourceDistributionBuilder {
	b.obj.Spec.Targets.AllNamespaces = true
	return b
}

// Include adds namespaces to includedNamespaces.
func (b *ResourceDistributionBuilder) Include(names ...string) *ResourceDistributionBuilder {
	for _, n := range names {
		b.obj.Spec.Targets.IncludedNamespaces.List = append(b.obj.Spec.Targets.IncludedNamespaces.List, appsv1alpha1.ResourceDistributionNamespace{Name: n})
	}
	return b
}

// Exclude adds namespaces to excludedNamespaces.
func (b *ResourceDistributionBuilder) Exclude(names ...string) *ResourceDistributionBuilder {
	for _, n := range names {
		b.obj.Spec.Targets.ExcludedNamespaces.List = append(b.obj.Spec.Targets.ExcludedNamespaces.List, appsv1alpha1.ResourceDistributionNamespace{Name: n})
	}
	return b
}

// NamespaceLabels selects the namespaces carrying every label of match.
func (b *ResourceDistributionBuilder) NamespaceLabels(match map[string]string) *ResourceDistributionBuilder {
	b.obj.Spec.Targets.NamespaceLabelSelector = metav1.LabelSelector{MatchLabels: match}
	return b
}

// Obj returns a copy of the ResourceDistribution.
func (b *ResourceDistributionBuilder) Obj() *appsv1alpha1.ResourceDistribution {
	return b.obj.DeepCopy()
}

// PersistentPodStateBuilder builds a PersistentPodState.
type PersistentPodStateBuilder struct {
	obj *appsv1alpha1.PersistentPodState
}

// PersistentPodState starts a PersistentPodState targeting the Advanced StatefulSet target,
// with no topology.
func PersistentPodState(name, namespace, target string) *PersistentPodStateBuilder {
	return &PersistentPodStateBuilder{obj: &appsv1alpha1.PersistentPodState{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "PersistentPodState"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1alpha1.PersistentPodStateSpec{TargetReference: appsv1alpha1.TargetReference{
			APIVersion: "apps.kruise.io/v1beta1", Kind: "StatefulSet", Name: target}},
	}}
}

// Required sets requiredPersistentTopology to keys.
func (b *PersistentPodStateBuilder) Required(keys ...string) *PersistentPodStateBuilder {
	b.obj.Spec.RequiredPersistentTopology = &appsv1alpha1.NodeTopologyTerm{NodeTopologyKeys: keys}
	return b
}

// Preferred adds a preferredPersistentTopology term of weight over keys.
func (b *PersistentPodStateBuilder) Preferred(weight int32, keys ...string) *PersistentPodStateBuilder {
	b.obj.Spec.PreferredPersistentTopology = append(b.obj.Spec.PreferredPersistentTopology,
		appsv1alpha1.PreferredTopologyTerm{Weight: weight, Preference: appsv1alpha1.NodeTopologyTerm{NodeTopologyKeys: keys}})
	return b
}

// Annotations adds persistentPodAnnotations keys.
func (b *PersistentPodStateBuilder) Annotations(keys ...string) *PersistentPodStateBuilder {
	for _, k := range keys {
		b.obj.Spec.PersistentPodAnnotations = append(b.obj.Spec.PersistentPodAnnotations, appsv1alpha1.PersistentPodAnnotation{Key: k})
	}
	return b
}

// Target makes the targetRef name a workload of apiVersion and kind, keeping its name.
func (b *PersistentPodStateBuilder) Target(apiVersion, kind string) *PersistentPodStateBuilder {
	b.obj.Spec.TargetReference.APIVersion, b.obj.Spec.TargetReference.Kind = apiVersion, kind
	return b
}

// Retention sets persistentPodStateRetentionPolicy.
func (b *PersistentPodStateBuilder) Retention(p appsv1alpha1.PersistentPodStateRetentionPolicyType) *PersistentPodStateBuilder {
	b.obj.Spec.PersistentPodStateRetentionPolicy = p
	return b
}

// Obj returns a copy of the PersistentPodState.
func (b *PersistentPodStateBuilder) Obj() *appsv1alpha1.PersistentPodState { return b.obj.DeepCopy() }
