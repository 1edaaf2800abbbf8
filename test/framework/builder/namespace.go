package builder

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NamespaceBuilder builds a Namespace.
type NamespaceBuilder struct {
	ns *corev1.Namespace
}

// Namespace starts a namespace; an empty name with GenerateName lets the apiserver pick one.
func Namespace(name string) *NamespaceBuilder {
	return &NamespaceBuilder{ns: &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}}
}

// GenerateName asks the apiserver to name the namespace from prefix; the name is cleared.
func (b *NamespaceBuilder) GenerateName(prefix string) *NamespaceBuilder {
	b.ns.Name, b.ns.GenerateName = "", prefix
	return b
}

// Label sets one label.
func (b *NamespaceBuilder) Label(key, value string) *NamespaceBuilder {
	b.ns.Labels = setKey(b.ns.Labels, key, value)
	return b
}

// Labels sets each of the labels, keeping others.
func (b *NamespaceBuilder) Labels(labels map[string]string) *NamespaceBuilder {
	b.ns.Labels = merge(b.ns.Labels, labels)
	return b
}

// Annotation sets one annotation.
func (b *NamespaceBuilder) Annotation(key, value string) *NamespaceBuilder {
	b.ns.Annotations = setKey(b.ns.Annotations, key, value)
	return b
}

// Obj returns a copy of the namespace built so far.
func (b *NamespaceBuilder) Obj() *corev1.Namespace {
	return b.ns.DeepCopy()
}
