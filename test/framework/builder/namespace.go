package builder

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NamespaceBuilder builds a Namespace.
type NamespaceBuilder struct {
	Meta[*NamespaceBuilder]
	ns *corev1.Namespace
}

// Namespace starts a namespace; an empty name with GenerateName lets the apiserver pick one.
func Namespace(name string) *NamespaceBuilder {
	b := &NamespaceBuilder{ns: &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}}
	b.Meta = Meta[*NamespaceBuilder]{obj: &b.ns.ObjectMeta, builder: b}
	return b
}

// Obj returns a copy of the namespace built so far.
func (b *NamespaceBuilder) Obj() *corev1.Namespace {
	return b.ns.DeepCopy()
}
