package builder

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// DeploymentBuilder builds an apps/v1 Deployment.
type DeploymentBuilder struct {
	Meta[*DeploymentBuilder]
	d *appsv1.Deployment
}

// Deployment starts a Deployment of one replica selecting "app: <name>", whose pods run one
// container, "main", on DefaultImage.
func Deployment(name, namespace string) *DeploymentBuilder {
	selector, tmpl := AppTemplate(name)
	b := &DeploymentBuilder{d: &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: selector, Template: tmpl},
	}}
	b.Meta = Meta[*DeploymentBuilder]{obj: &b.d.ObjectMeta, builder: b}
	return b
}

// Replicas sets spec.replicas.
func (b *DeploymentBuilder) Replicas(n int32) *DeploymentBuilder {
	b.d.Spec.Replicas = ptr.To(n)
	return b
}

// Image sets the image of the pods' main container.
func (b *DeploymentBuilder) Image(image string) *DeploymentBuilder {
	b.d.Spec.Template.Spec.Containers[0].Image = image
	return b
}

// Obj returns a copy of the Deployment.
func (b *DeploymentBuilder) Obj() *appsv1.Deployment { return b.d.DeepCopy() }

// AppTemplate is what every workload builder here and in kinds shares: the selector
// "app: <name>" and a pod template of that label with one container, "main", on DefaultImage.
func AppTemplate(name string) (*metav1.LabelSelector, corev1.PodTemplateSpec) {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}, corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: DefaultImage}}},
	}
}
